#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import POSIXFiles

/// The vault's file operations: ``Files``' (no symbolic link followed, only regular files of this
/// user's of a bounded size read, files created exclusively, fsync where it must), each failure
/// named as a ``VaultError`` — what is planted or damaged at a vault file's name is corruption,
/// another user's file is unsafe, what the system refuses is an I/O error — and the vault
/// directory's own checks.
enum POSIXFile {
    static func errorText(_ code: Int32 = errno) -> String { Files.errorText(code) }

    /// Whether a directory entry exists at `path` (a dangling link counts: it is not ours to ignore).
    static func exists(_ path: String) -> Bool { Files.exists(path) }

    static func isDirectory(_ path: String) -> Bool { Files.isDirectory(path, followingLink: true) }

    /// Entries of a directory, without `.` and `..`; none when it cannot be listed.
    static func entries(_ path: String) -> [String] {
        (try? Files.listing(path)) ?? []
    }

    static func makeDirectory(_ path: String, durable: Bool = true) throws(VaultError) {
        try named { () throws(FileFailure) in try Files.makeDirectory(path, durable: durable) }
    }

    /// The same, adding to `made` the directories this call made itself (see
    /// ``Files/makeDirectory(_:durable:made:)``): only those are a failed create's to take back.
    static func makeDirectory(_ path: String, durable: Bool = true, made: inout [String]) throws(VaultError) {
        try named { () throws(FileFailure) in try Files.makeDirectory(path, durable: durable, made: &made) }
    }

    /// Refuses a vault directory that is not a directory this user owns, or that others can write
    /// to: someone who can add, replace or link files in it could plant what the vault then reads
    /// or overwrites (ssh and gpg refuse their directories for the same reason).
    static func requirePrivateDirectory(_ path: String) throws(VaultError) {
        try requireOwnDirectory(path)
        var st = stat()
        stat(path, &st)
        guard st.st_mode & 0o022 == 0 else {
            throw VaultError(.unsafe, "\(path) can be written by others (mode \(String(st.st_mode & 0o777, radix: 8))); run 'chmod 700 \(path)'")
        }
    }

    /// Refuses a directory that is not this user's (whatever its mode).
    static func requireOwnDirectory(_ path: String) throws(VaultError) {
        var st = stat()
        guard stat(path, &st) == 0 else { throw VaultError(.io, "cannot inspect \(path): \(errorText())") }
        guard (st.st_mode & S_IFMT) == S_IFDIR else { throw VaultError(.invalid, "\(path) is not a directory") }
        guard st.st_uid == geteuid() else {
            throw VaultError(.unsafe, "\(path) belongs to another user (uid \(st.st_uid)); a vault must be in a directory you own")
        }
    }

    /// Makes the vault directory private (0700) and checks that it is.
    static func makePrivate(_ path: String) throws(VaultError) {
        guard chmod(path, 0o700) == 0 else { throw VaultError(.io, "cannot make \(path) private: \(errorText())") }
        try requirePrivateDirectory(path)
    }

    /// Opens a file the vault owns, never through a symbolic link and never blocking on a FIFO, and
    /// checks that it is a regular file of this user's. A missing file is `notFound`.
    static func openOwned(_ path: String, _ flags: Int32) throws(VaultError) -> Int32 {
        try named { () throws(FileFailure) in try Files.openOwned(path, flags) }
    }

    /// Why `open(path)` failed, as the vault names it.
    static func openFailure(_ path: String, _ code: Int32 = errno) -> VaultError { VaultError(Files.openFailure(path, code)) }

    /// The whole of a regular file the vault owns, refused when longer than `limit` bytes.
    static func readAll(_ path: String, limit: Int) throws(VaultError) -> [UInt8] {
        try named { () throws(FileFailure) in try Files.readAll(path, limit: limit) }
    }

    /// Bytes `start..<wanted` of a regular file the vault owns (fewer if it is shorter), and the
    /// file's size; refused when the file is longer than `limit`.
    static func readPrefix(_ path: String, limit: Int, from start: Int = 0, upTo wanted: Int) throws(VaultError) -> (bytes: [UInt8], size: Int) {
        try named { () throws(FileFailure) in try Files.readPrefix(path, limit: limit, from: start, upTo: wanted) }
    }

    /// `count` bytes at `offset` of an open file; fewer is corruption.
    static func read(_ fd: Int32, path: String, at offset: UInt64, count: Int) throws(VaultError) -> [UInt8] {
        try named { () throws(FileFailure) in try Files.read(fd, path: path, at: offset, count: count) }
    }

    /// The size of an open file.
    static func size(_ fd: Int32, path: String) throws(VaultError) -> Int {
        try named { () throws(FileFailure) in try Files.size(fd, path: path) }
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws(VaultError) {
        try named { () throws(FileFailure) in try Files.writeAll(fd, bytes, path: path) }
    }

    /// Writes all of `bytes` at `offset` of an open file, whatever its file position.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8], at offset: UInt64, path: String) throws(VaultError) {
        try named { () throws(FileFailure) in try Files.writeAll(fd, bytes, at: offset, path: path) }
    }

    /// Flushes an open file to disk (`fsync`); with `durable` false, nothing: for a throw-away
    /// vault (``Vault/Durability/none``), whose files nobody needs after a crash.
    static func sync(_ fd: Int32, path: String, durable: Bool = true) throws(VaultError) {
        try named { () throws(FileFailure) in try Files.sync(fd, path: path, durable: durable) }
    }

    static func syncDirectory(_ path: String, durable: Bool = true) throws(VaultError) {
        try named { () throws(FileFailure) in try Files.syncDirectory(path, durable: durable) }
    }

    /// Creates `path` afresh (mode 0600) and writes `bytes` to it, flushed, whatever was at `path`
    /// unlinked first (``Files/writeNew(_:_:durable:)``).
    static func writeNew(_ path: String, _ bytes: [UInt8], durable: Bool = true) throws(VaultError) {
        try named { () throws(FileFailure) in try Files.writeNew(path, bytes, durable: durable) }
    }

    /// Replaces `path` atomically: a fresh temporary file (``writeNew(_:_:durable:)``), renamed over the
    /// target, then the directory flushed. A reader sees the old file or the new one, never a mix.
    static func replaceAtomically(_ path: String, with bytes: [UInt8], directory: String, durable: Bool = true) throws(VaultError) {
        let temporary = path + ".tmp"
        try writeNew(temporary, bytes, durable: durable)
        try renameFile(temporary, to: path)
        try syncDirectory(directory, durable: durable)
    }

    static func renameFile(_ from: String, to: String) throws(VaultError) {
        try named { () throws(FileFailure) in try Files.move(from, to: to) }
    }

    /// `body`'s result, or its failure named as the vault names it.
    private static func named<T>(_ body: () throws(FileFailure) -> T) throws(VaultError) -> T {
        do { return try body() } catch { throw VaultError(error) }
    }
}

extension VaultError {
    /// A file operation's failure, as the vault names it: what is at a vault file's name and is not
    /// a regular file of this user's (a link, a socket, a directory, a device), or is of a size no
    /// such file has, is corruption; another user's file is unsafe; a missing one is `notFound`.
    init(_ failure: FileFailure) {
        let kind: Kind = switch failure.reason {
        case .missing: .notFound
        case .link, .notRegular, .tooLarge, .truncated: .corrupted
        case .otherUser: .unsafe
        case .system: .io
        case .busy: .busy
        }
        self.init(kind, failure.message)
    }
}
