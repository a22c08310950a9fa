import Foundation

/// A PostgreSQL cluster of the test's own: `initdb` into a temporary directory (as `nobody` when
/// the tests run as root, since the server refuses root), trust authentication, a Unix socket in
/// that directory and no TCP port, no fsync (a throw-away cluster). Stopped and removed by
/// ``destroy()``; the server binaries are Debian's (`postgresql`, installed by scripts/setup.sh).
final class PrivateCluster: @unchecked Sendable {
    let directory: String
    private let bin: String
    private let owner: String?

    /// The one cluster the contract checks share, each in a database of its own.
    /// Stopped and removed when the test process exits.
    static let shared: PrivateCluster = {
        do {
            let cluster = try PrivateCluster()
            sharedDirectory = cluster.directory
            atexit { PrivateCluster.stopShared() }
            return cluster
        } catch { fatalError("cannot start a private PostgreSQL cluster: \(error)") }
    }()
    nonisolated(unsafe) private static var sharedDirectory: String?
    private static func stopShared() { if sharedDirectory != nil { shared.destroy() } }

    init() throws {
        guard let version = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql"))?
            .compactMap(Int.init).max()
        else { throw Failure("PostgreSQL's server is not installed (/usr/lib/postgresql/*/bin): run scripts/setup.sh") }
        bin = "/usr/lib/postgresql/\(version)/bin"
        directory = "/tmp/pg-" + UUID().uuidString.prefix(8).lowercased()
        owner = getuid() == 0 ? "nobody" : nil
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        if let owner { try run("/bin/chown", [owner, directory], asOwner: false) }
        try run(bin + "/initdb", ["-D", directory + "/data", "-U", "authctl", "--auth=trust", "-E", "UTF8", "--no-sync"])
        let conf = """
            listen_addresses = ''
            unix_socket_directories = '\(directory)'
            fsync = off
            full_page_writes = off
            max_connections = 200

            """
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: directory + "/data/postgresql.conf"))
        handle.seekToEndOfFile()
        handle.write(Data(conf.utf8))
        try handle.close()
        try start()
    }

    /// The address of database `database`, account `account`, over the cluster's socket.
    func address(_ database: String = "postgres", account: String? = nil) -> String {
        "postgresql:///\(database)?host=\(directory)&user=authctl" + (account.map { "#" + $0 } ?? "")
    }

    func start() throws {
        try run(bin + "/pg_ctl", ["-D", directory + "/data", "-l", directory + "/log", "-w", "-t", "60", "start"])
    }

    func stop() throws {
        try run(bin + "/pg_ctl", ["-D", directory + "/data", "-m", "fast", "-w", "-t", "60", "stop"])
    }

    /// Runs SQL as the cluster's superuser (psql, stopping at the first error).
    func sql(_ statement: String, database: String = "postgres") throws {
        try run(bin + "/psql", ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", directory, "-U", "authctl", "-d", database, "-c", statement])
    }

    func destroy() {
        try? stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs a program to its end with its output in the cluster's `commands.log`, as the
    /// cluster's owner. posix_spawn and waitpid rather than Foundation's Process, whose wait for
    /// a child's end also waits on descriptors a server that pg_ctl started keeps open.
    private func run(_ program: String, _ arguments: [String], asOwner: Bool = true) throws {
        let argv = (asOwner && owner != nil) ? ["/usr/sbin/runuser", "-u", owner!, "--", program] + arguments : [program] + arguments
        let logPath = "/tmp/authctl-pg-\(getpid()).log"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let cArgs = argv.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, cArgs, environ)
        guard spawned == 0 else { throw Failure("cannot run \(argv[0]): error \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw Failure("waiting for \(argv[0]) failed: errno \(errno)") }
        }
        let exited = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        guard exited == 0 else {
            throw Failure("\(program) \(arguments.joined(separator: " ")) exited \(exited) (see \(logPath))")
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
