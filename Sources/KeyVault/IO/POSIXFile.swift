#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The few file operations the vault needs, with errors that say which file and why. Hand-written
/// on POSIX calls rather than Foundation's file APIs because every step must be seen: the vault
/// never follows a symbolic link for a file it reads or writes, reads only regular files of a
/// bounded size it owns, creates files exclusively, and fsyncs what it must.
enum POSIXFile {
    static func errorText(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }

    /// Whether a directory entry exists at `path` (a dangling link counts: it is not ours to ignore).
    static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// Entries of a directory, without `.` and `..`; none when it cannot be listed.
    static func entries(_ path: String) -> [String] {
        (try? listing(path)) ?? []
    }

    /// Entries of a directory, without `.` and `..`, or why it cannot be listed.
    static func listing(_ path: String) throws(VaultError) -> [String] {
        guard let dir = opendir(path) else { throw VaultError(.io, "cannot list \(path): \(errorText())") }
        defer { closedir(dir) }
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        var out = [String]()
        while let entry = readdir(dir) {
            // The name is read through a pointer, up to its NUL: a dirent is only as long as its
            // name, so copying the whole `d_name` array could read past the end of its buffer.
            let name = String(cString: UnsafeRawPointer(entry).advanced(by: nameOffset).assumingMemoryBound(to: CChar.self))
            if name != "." && name != ".." { out.append(name) }
        }
        return out
    }

    /// Refuses a path that is a symbolic link (or missing): for directories the vault makes itself
    /// inside its own, which are never links.
    static func requireNoLink(_ path: String) throws(VaultError) {
        var st = stat()
        guard lstat(path, &st) == 0 else { throw VaultError(.io, "cannot inspect \(path): \(errorText())") }
        guard (st.st_mode & S_IFMT) != S_IFLNK else { throw VaultError(.unsafe, "\(path) is a symbolic link, which the vault never follows") }
    }

    static func makeDirectory(_ path: String, durable: Bool = true) throws(VaultError) {
        if isDirectory(path) { return }
        let parent = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        if !parent.isEmpty, !isDirectory(parent) { try makeDirectory(parent, durable: durable) }
        guard mkdir(path, 0o700) == 0 || errno == EEXIST else {
            throw VaultError(.io, "cannot create directory \(path): \(errorText())")
        }
        // The new entry is durable only once its parent directory is flushed.
        try syncDirectory(parent.isEmpty ? (path.hasPrefix("/") ? "/" : ".") : parent, durable: durable)
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
        let fd = open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw openFailure(path) }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let text = errorText()
            close(fd)
            throw VaultError(.io, "cannot inspect \(path): \(text)")
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw VaultError(.corrupted, "\(path) is not a regular file")
        }
        guard st.st_uid == geteuid() else {
            close(fd)
            throw VaultError(.unsafe, "\(path) belongs to another user (uid \(st.st_uid))")
        }
        return fd
    }

    /// Why `open(path)` failed, as the vault names it: what is at a vault file's name and is not a
    /// regular file (a link, a socket, a directory, a device) is corruption, not an I/O error.
    static func openFailure(_ path: String, _ code: Int32 = errno) -> VaultError {
        if code == ENOENT { return VaultError(.notFound, "\(path) is missing") }
        var st = stat()
        if lstat(path, &st) == 0 {
            switch st.st_mode & S_IFMT {
            case S_IFLNK: return VaultError(.corrupted, "\(path) is a symbolic link, which the vault never follows")
            case S_IFREG:
                // Another user's file, readable or not, is theirs: unsafe, as `openOwned` says of one it could open.
                if st.st_uid != geteuid() { return VaultError(.unsafe, "\(path) belongs to another user (uid \(st.st_uid))") }
            default: return VaultError(.corrupted, "\(path) is not a regular file")
            }
        }
        return VaultError(.io, "cannot open \(path): \(errorText(code))")
    }

    /// The whole of a regular file the vault owns, refused when longer than `limit` bytes.
    static func readAll(_ path: String, limit: Int) throws(VaultError) -> [UInt8] {
        try readPrefix(path, limit: limit, upTo: limit).bytes
    }

    /// Bytes `start..<wanted` of a regular file the vault owns (fewer if it is shorter), and the
    /// file's size; refused when the file is longer than `limit`. Only what is asked for is
    /// allocated, so a huge or sparse file costs nothing to refuse or to skip past.
    static func readPrefix(_ path: String, limit: Int, from start: Int = 0, upTo wanted: Int) throws(VaultError) -> (bytes: [UInt8], size: Int) {
        let fd = try openOwned(path, O_RDONLY)
        defer { close(fd) }
        var st = stat()
        fstat(fd, &st)
        guard Int(st.st_size) <= limit else {
            throw VaultError(.corrupted, "\(path) is \(st.st_size) bytes, more than a vault file of its kind can hold (\(limit))")
        }
        guard start <= Int(st.st_size) else {
            throw VaultError(.corrupted, "\(path) is \(st.st_size) bytes, shorter than the \(start) its index covers: it was truncated")
        }
        var out = [UInt8](repeating: 0, count: max(min(Int(st.st_size), max(wanted, 0)) - start, 0))
        var length = 0
        while length < out.count {
            let n = out.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + length, $0.count - length, off_t(start + length)) }
            if n < 0 { if errno == EINTR { continue }; throw VaultError(.io, "cannot read \(path): \(errorText())") }
            if n == 0 { break }
            length += n
        }
        out.removeLast(out.count - length)
        return (out, Int(st.st_size))
    }

    /// `count` bytes at `offset` of an open file; fewer is corruption (the file is shorter than
    /// what names it says).
    static func read(_ fd: Int32, path: String, at offset: UInt64, count: Int) throws(VaultError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var length = 0
        while length < count {
            let n = out.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + length, count - length, off_t(offset) + off_t(length)) }
            if n < 0 { if errno == EINTR { continue }; throw VaultError(.io, "cannot read \(path): \(errorText())") }
            if n == 0 { throw VaultError(.corrupted, "\(path) ends at byte \(offset + UInt64(length)), before what it must hold") }
            length += n
        }
        return out
    }

    /// The size of an open file.
    static func size(_ fd: Int32, path: String) throws(VaultError) -> Int {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw VaultError(.io, "cannot inspect \(path): \(errorText())") }
        return Int(st.st_size)
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws(VaultError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0 { if errno == EINTR { continue }; throw VaultError(.io, "cannot write \(path): \(errorText())") }
            offset += n
        }
    }

    /// Flushes an open file to disk (`fsync`); with `durable` false, nothing: for a throw-away
    /// vault (``Vault/Durability/none``), whose files nobody needs after a crash.
    static func sync(_ fd: Int32, path: String, durable: Bool = true) throws(VaultError) {
        guard durable else { return }
        guard fsync(fd) == 0 else { throw VaultError(.io, "cannot flush \(path) to disk: \(errorText())") }
    }

    static func syncDirectory(_ path: String, durable: Bool = true) throws(VaultError) {
        guard durable else { return }
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw VaultError(.io, "cannot open directory \(path): \(errorText())") }
        defer { close(fd) }
        try sync(fd, path: path)
    }

    /// Creates `path` afresh (mode 0600) and writes `bytes` to it, flushed. Whatever was at `path`
    /// is unlinked first — a link planted there is removed, never followed — and the file is
    /// created exclusively, so the vault writes only into a file it just made.
    static func writeNew(_ path: String, _ bytes: [UInt8], durable: Bool = true) throws(VaultError) {
        guard unlink(path) == 0 || errno == ENOENT else { throw VaultError(.io, "cannot remove \(path): \(errorText())") }
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw VaultError(.io, "cannot create \(path): \(errorText())") }
        do {
            try writeAll(fd, bytes, path: path)
            try sync(fd, path: path, durable: durable)
        } catch {
            close(fd)
            unlink(path)
            throw error
        }
        close(fd)
    }

    /// Replaces `path` atomically: a fresh temporary file (``writeNew(_:_:)``), renamed over the
    /// target, then the directory flushed. A reader sees the old file or the new one, never a mix.
    static func replaceAtomically(_ path: String, with bytes: [UInt8], directory: String, durable: Bool = true) throws(VaultError) {
        let temporary = path + ".tmp"
        try writeNew(temporary, bytes, durable: durable)
        try renameFile(temporary, to: path)
        try syncDirectory(directory, durable: durable)
    }

    static func renameFile(_ from: String, to: String) throws(VaultError) {
        guard rename(from, to) == 0 else {
            let text = errorText()
            unlink(from)
            throw VaultError(.io, "cannot rename \(from) to \(to): \(text)")
        }
    }
}
