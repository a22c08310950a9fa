import Foundation
import Glibc
import Server
import Session

/// `authctl serve`: the request layer over HTTP for test suites in any language (docs/server.md).
enum ServeCommand {
    static let listen = OptionSpec.value("--listen", "HOST:PORT", "the IPv4 address and port to listen on (default 127.0.0.1:0, a free port)")
    static let socket = OptionSpec.value("--socket", "PATH", "listen on a Unix socket at PATH instead (made mode 600; never over an existing file but a socket nobody listens on, which a killed server left)",
                                         completion: .files)
    static let tokenFile = OptionSpec.value("--token-file", "FILE", "the bearer token every request carries; made (mode 600) when missing; refused when others may read or write it, or shorter than 16 bytes",
                                            completion: .files)
    static let threads = OptionSpec.value("--threads", "N", "threads serving requests (default: the processors, at least 2; at most 64)")
    static let headerTimeout = OptionSpec.value("--header-timeout", "SECONDS",
                                                "how long a connection has to send each request's line and headers, however slowly they come, from when it opened or its last answer was sent (default 30; 1 to 3600)")
    static let scratch = OptionSpec.value("--scratch", "DIR", "where accounts' throw-away vaults are made (default $TMPDIR, else /tmp; a tmpfs such as /dev/shm is fastest)",
                                          completion: .directories)

    static let spec = CommandSpec(
        name: "serve", abstract: "serve accounts, devices, passkeys and ceremonies over HTTP (for test suites in any language)",
        discussion: """
        Prints 'listening on URL' first, then serves until SIGTERM or SIGINT, which finish the requests in flight,
        end the event streams and remove every in-memory account. Every request but GET /health and GET /openapi.json
        carries 'Authorization: Bearer TOKEN': the token of --token-file, or, without it, one made for this run and
        printed on the second line ('token TOKEN'). Accounts are made with POST /accounts; with the global --vault
        option the vault is served as the account 'vault' as well (the PIN of its devices from --pin-file, else each
        request's "pin"). The routes, their bodies and answers are in GET /openapi.json and docs/server.md.
        """,
        options: [listen, socket, tokenFile, threads, headerTimeout, scratch],
        arguments: [],
        examples: ["authctl serve --listen 127.0.0.1:8321 --token-file ./token", "authctl serve --socket /run/user/1000/authctl.sock --token-file ./token",
                   "authctl --vault ./vault --passphrase-file ./pass serve --token-file ./token"],
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) { try serve(args, intermediary: nil) }

    /// Serves until SIGTERM or SIGINT: the routes of `serve`, and, with `intermediary`, WebDriver's
    /// commands passed on to its upstream (`authctl webdriver`).
    static func serve(_ args: ParsedArguments, intermediary: WebDriverIntermediary?) throws(CLIError) {
        var host = "127.0.0.1", port: UInt16 = 0
        if let place = args.value(listen) {
            guard args.value(socket) == nil else { throw CLIError(.usage, "--listen and --socket are each a place to listen: give one") }
            guard let colon = place.lastIndex(of: ":"), let number = UInt16(place[place.index(after: colon)...]), colon > place.startIndex else {
                throw CLIError(.usage, "--listen takes HOST:PORT (an IPv4 address and a port, 0 for a free one)")
            }
            host = String(place[..<colon])
            port = number
        }
        let socketPath = args.value(socket)
        if let socketPath, !socketPath.hasPrefix("/") { throw CLIError(.usage, "--socket takes an absolute path") }
        // As many threads as processors: waiting (an event stream, a pending sign-in) holds none,
        // and more threads than cores only contend for an account's lock.
        let threadCount = try args.integer(threads, in: 1...64) ?? min(max(ProcessInfo.processInfo.activeProcessorCount, 2), 64)
        let headSeconds = try args.integer(headerTimeout, in: 1...3600) ?? 30
        let local = socketPath != nil || host.hasPrefix("127.")
        // WebDriver's commands carry no token (a driver takes none): only this machine's may come.
        if intermediary != nil, !local { throw CLIError(.usage, "webdriver listens on loopback only (127.0.0.0/8): \(EchoedInput.text(host)) is not") }
        let token: String
        var printed: String?
        if let file = args.value(tokenFile) {
            token = try readOrMakeToken(file)
        } else {
            guard local else { throw CLIError(.usage, "listening on \(EchoedInput.text(host)), not loopback, needs --token-file") }
            token = Base64URL.encode(RandomSource.live.bytes(32))
            printed = token
        }
        let place = args.value(scratch) ?? ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: place, isDirectory: &isDirectory), isDirectory.boolValue, access(place, W_OK | X_OK) == 0 else {
            throw CLIError(.ioError, "the scratch directory \(EchoedInput.path(place)) is not a directory this user can write")
        }
        let service = AccountService(token: token, scratch: place, intermediary: intermediary)
        if args.value(GlobalOptions.vault) != nil {
            let vault = try VaultSelection(args)
            let pin = try args.value(GlobalOptions.pinFile).map { file throws(CLIError) in
                guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { throw CLIError(.ioError, "cannot read the PIN file \(EchoedInput.path(file))") }
                return String(text.prefix { $0 != "\n" })
            }
            try service.host(id: "vault", pin: pin) { people throws(CLIError) in try vault.session(.write, people: people) }
        }
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGTERM)
        sigaddset(&signals, SIGINT)
        pthread_sigmask(SIG_BLOCK, &signals, nil)  // before any thread starts: only sigwait takes them
        let server: HTTPServer
        let connectionLimit = 1024
        allowDescriptors(for: connectionLimit)
        do {
            server = try HTTPServer(address: socketPath ?? host, port: port, threads: threadCount, bodyLimit: 1 << 20, timeoutSeconds: 30,
                                    headerTimeoutSeconds: headSeconds, connectionLimit: connectionLimit) { service.handle($0) }
        } catch { throw CLIError(.ioError, error.message) }
        intermediary?.listening(at: "http://\(host):\(server.port)")
        try Output.data(socketPath.map { "listening on unix:\($0)" } ?? "listening on http://\(host):\(server.port)")
        if let printed { try Output.data("token \(printed)") }
        // Every few seconds a comment on each event stream: a client that left is noticed.
        let pinger = Thread {
            while !Thread.current.isCancelled {
                Thread.sleep(forTimeInterval: 5)
                service.pingStreams()
            }
        }
        pinger.start()
        var received: Int32 = 0
        sigwait(&signals, &received)
        pinger.cancel()
        server.quiesce()
        // The streams end and the pending sign-ins are canceled; libmicrohttpd stops only once
        // no connection waits for a stream's bytes.
        let streams = service.beginStop()
        let deadline = Date(timeIntervalSinceNow: 5)
        while streams.contains(where: { !$0.isReleased }) && Date() < deadline { usleep(10_000) }
        server.stop()
        service.close()
        intermediary?.close()
        if let socketPath { unlink(socketPath) }
    }

    /// Raises the soft limit on open files toward the hard one, so that the connection limit, and
    /// the connections past it that make room (see HTTPServer), fit beside the vaults' files: a
    /// soft limit of 1,024, common, would refuse connections before the limit is reached, and
    /// then none makes room.
    static func allowDescriptors(for connections: Int) {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        let wanted = rlim_t(max(4096, connections * 2))
        guard limit.rlim_cur < wanted else { return }
        limit.rlim_cur = min(wanted, limit.rlim_max)  // RLIM_INFINITY is the largest value
        _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    }

    /// The shortest token a token file may hold: 16 bytes (one made here is 43).
    static let shortestToken = 16

    /// The first line of `file`; a new token written there (mode 600, never over a file) when it
    /// does not exist. A file that is not this user's own regular file, that its group or others
    /// may read or write (anyone who can read it is every account's owner, and anyone who can
    /// write it chooses the token), or whose token is shorter than ``shortestToken`` (guessed in
    /// a few requests) is refused, as ssh refuses such a private key.
    static func readOrMakeToken(_ file: String) throws(CLIError) -> String {
        // O_NONBLOCK: a FIFO put in its place is refused below, not waited on.
        let fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        if fd >= 0 {
            defer { close(fd) }
            var info = stat()
            guard fstat(fd, &info) == 0 else { throw CLIError(.ioError, "cannot read the token file \(EchoedInput.path(file)): \(String(cString: strerror(errno)))") }
            guard info.st_mode & S_IFMT == S_IFREG else { throw CLIError(.badInput, "the token file \(EchoedInput.path(file)) is not a regular file") }
            guard info.st_uid == geteuid() else { throw CLIError(.badInput, "the token file \(EchoedInput.path(file)) belongs to another user") }
            guard info.st_mode & 0o077 == 0 else {
                throw CLIError(.badInput, "the token file \(EchoedInput.path(file)) can be read or written by others (mode \(String(info.st_mode & 0o777, radix: 8))): "
                               + "chmod 600 it, or give a file that does not exist yet for a new token")
            }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = read(fd, &buffer, buffer.count)
            guard count >= 0 else { throw CLIError(.ioError, "cannot read the token file \(EchoedInput.path(file)): \(String(cString: strerror(errno)))") }
            let token = String(decoding: buffer.prefix(count), as: UTF8.self).split(separator: "\n").first.map(String.init)?
                .trimmingCharacters(in: .whitespaces) ?? ""
            guard !token.isEmpty else { throw CLIError(.badInput, "the token file \(EchoedInput.path(file)) is empty") }
            guard token.utf8.count >= shortestToken else {
                throw CLIError(.badInput, "the token in \(EchoedInput.path(file)) is \(token.utf8.count == 1 ? "1 byte" : "\(token.utf8.count) bytes"): a token is at least \(shortestToken) "
                               + "(give a file that does not exist yet for a new one)")
            }
            return token
        }
        guard errno == ENOENT else { throw CLIError(.ioError, "cannot read the token file \(EchoedInput.path(file)): \(String(cString: strerror(errno)))") }
        let token = Base64URL.encode(RandomSource.live.bytes(32))
        let made = open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard made >= 0 else { throw CLIError(.ioError, "cannot make the token file \(EchoedInput.path(file)): \(String(cString: strerror(errno)))") }
        defer { close(made) }
        let bytes = Array((token + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(made, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(made) == 0 else { throw CLIError(.ioError, "cannot write the token file \(EchoedInput.path(file))") }
        return token
    }
}
