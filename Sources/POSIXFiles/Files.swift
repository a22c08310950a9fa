#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file operations the vault and the account store's directory share, on POSIX calls rather
/// than Foundation's file APIs so that every step is seen: no symbolic link is followed for a file
/// that is read or written, only regular files of this user's of a bounded size are read, new
/// files are created exclusively and flushed before they count, and every failure says which
/// file and why (``FileFailure``), for each caller to name in its own errors.
package enum Files {
    package static func errorText(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }

    /// Whether a directory entry exists at `path` (a dangling link counts: it is not ours to ignore).
    package static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    /// Whether `path` is a directory: following a link at `path` itself, or (`followingLink` false)
    /// not, so that a link is never taken for one.
    package static func isDirectory(_ path: String, followingLink: Bool) -> Bool {
        var st = stat()
        return (followingLink ? stat(path, &st) : lstat(path, &st)) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// Entries of a directory, without `.` and `..`, or why it cannot be listed.
    package static func listing(_ path: String) throws(FileFailure) -> [String] {
        guard let dir = opendir(path) else { throw FileFailure(.system, "cannot list \(path): \(errorText())") }
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

    /// Makes directory `path` (0700) when it is missing, with its missing parents; each new entry
    /// is durable once its parent directory is flushed.
    package static func makeDirectory(_ path: String, durable: Bool) throws(FileFailure) {
        var made = [String]()
        try makeDirectory(path, durable: durable, made: &made)
    }

    /// The same, adding to `made` each directory this call's own `mkdir` made (outermost first,
    /// those made before a failure too): what was there already — given empty, reached through
    /// `..` or a link, or made meanwhile by another process — is not in it.
    package static func makeDirectory(_ path: String, durable: Bool, made: inout [String]) throws(FileFailure) {
        if isDirectory(path, followingLink: true) { return }
        let parent = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        if !parent.isEmpty, !exists(parent) { try makeDirectory(parent, durable: durable, made: &made) }
        if mkdir(path, 0o700) == 0 {
            made.append(path)
        } else if errno != EEXIST {
            throw FileFailure(.system, "cannot create directory \(path): \(errorText())")
        }
        try syncDirectory(parent.isEmpty ? (path.hasPrefix("/") ? "/" : ".") : parent, durable: durable)
    }

    /// Opens a file, never through a symbolic link and never blocking on a FIFO, and checks that it
    /// is a regular file of this user's.
    package static func openOwned(_ path: String, _ flags: Int32) throws(FileFailure) -> Int32 {
        let fd = open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw openFailure(path) }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let text = errorText()
            close(fd)
            throw FileFailure(.system, "cannot inspect \(path): \(text)")
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw FileFailure(.notRegular, "\(path) is not a regular file")
        }
        guard st.st_uid == geteuid() else {
            close(fd)
            throw FileFailure(.otherUser, "\(path) belongs to another user (uid \(st.st_uid))")
        }
        return fd
    }

    /// Why `open(path)` failed with `code`: what is at the name and is not a regular file (a link,
    /// a socket, a directory, a device) is said as such, not as the system's error.
    package static func openFailure(_ path: String, _ code: Int32 = errno) -> FileFailure {
        if code == ENOENT { return FileFailure(.missing, "\(path) is missing") }
        var st = stat()
        if lstat(path, &st) == 0 {
            switch st.st_mode & S_IFMT {
            case S_IFLNK: return FileFailure(.link, "\(path) is a symbolic link, which is never followed")
            case S_IFREG:
                // Another user's file, readable or not, is theirs, as `openOwned` says of one it could open.
                if st.st_uid != geteuid() { return FileFailure(.otherUser, "\(path) belongs to another user (uid \(st.st_uid))") }
            default: return FileFailure(.notRegular, "\(path) is not a regular file")
            }
        }
        return FileFailure(.system, "cannot open \(path): \(errorText(code))")
    }

    /// Bytes `start..<wanted` of a regular file of this user's (fewer if it is shorter), and the
    /// file's size; refused when the file is longer than `limit`. Only what is asked for is
    /// allocated, so a huge or sparse file costs nothing to refuse or to skip past.
    package static func readPrefix(_ path: String, limit: Int, from start: Int = 0, upTo wanted: Int) throws(FileFailure) -> (bytes: [UInt8], size: Int) {
        let fd = try openOwned(path, O_RDONLY)
        defer { close(fd) }
        let size = try size(fd, path: path)
        guard size <= limit else {
            throw FileFailure(.tooLarge, "\(path) is \(size) bytes, more than a file of its kind may hold (\(limit))")
        }
        guard start <= size else {
            throw FileFailure(.truncated, "\(path) is \(size) bytes, shorter than the \(start) its index covers: it was truncated")
        }
        var out = [UInt8](repeating: 0, count: max(min(size, max(wanted, 0)) - start, 0))
        var length = 0
        while length < out.count {
            let n = out.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + length, $0.count - length, off_t(start + length)) }
            if n < 0 { if errno == EINTR { continue }; throw FileFailure(.system, "cannot read \(path): \(errorText())") }
            if n == 0 { break }
            length += n
        }
        out.removeLast(out.count - length)
        return (out, size)
    }

    /// The whole of a regular file of this user's, refused when longer than `limit` bytes.
    package static func readAll(_ path: String, limit: Int) throws(FileFailure) -> [UInt8] {
        try readPrefix(path, limit: limit, upTo: limit).bytes
    }

    /// `count` bytes at `offset` of an open file; fewer is `truncated` (the file is shorter than
    /// what names it says).
    package static func read(_ fd: Int32, path: String, at offset: UInt64, count: Int) throws(FileFailure) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var length = 0
        while length < count {
            let n = out.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + length, count - length, off_t(offset) + off_t(length)) }
            if n < 0 { if errno == EINTR { continue }; throw FileFailure(.system, "cannot read \(path): \(errorText())") }
            if n == 0 { throw FileFailure(.truncated, "\(path) ends at byte \(offset + UInt64(length)), before what it must hold") }
            length += n
        }
        return out
    }

    /// The size of an open file.
    package static func size(_ fd: Int32, path: String) throws(FileFailure) -> Int {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw FileFailure(.system, "cannot inspect \(path): \(errorText())") }
        return Int(st.st_size)
    }

    package static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws(FileFailure) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0 { if errno == EINTR { continue }; throw FileFailure(.system, "cannot write \(path): \(errorText())") }
            offset += n
        }
    }

    /// Writes all of `bytes` at `offset` of an open file (`pwrite`), whatever its file position.
    package static func writeAll(_ fd: Int32, _ bytes: [UInt8], at offset: UInt64, path: String) throws(FileFailure) {
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(offset) + off_t(written)) }
            if n < 0 { if errno == EINTR { continue }; throw FileFailure(.system, "cannot write \(path): \(errorText())") }
            written += n
        }
    }

    /// Flushes an open file to disk (`fsync`); with `durable` false, nothing: for throw-away
    /// files nobody needs after a crash.
    package static func sync(_ fd: Int32, path: String, durable: Bool) throws(FileFailure) {
        guard durable else { return }
        guard fsync(fd) == 0 else { throw FileFailure(.system, "cannot flush \(path) to disk: \(errorText())") }
    }

    /// Flushes directory `path` (what was created, renamed or removed in it); with `followingLink`
    /// false, a link at `path` is refused rather than followed.
    package static func syncDirectory(_ path: String, durable: Bool, followingLink: Bool = true) throws(FileFailure) {
        guard durable else { return }
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (followingLink ? 0 : O_NOFOLLOW))
        guard fd >= 0 else { throw FileFailure(.system, "cannot open directory \(path): \(errorText())") }
        defer { close(fd) }
        try sync(fd, path: path, durable: durable)
    }

    /// Creates `path` afresh (mode 0600) and writes `bytes` to it, flushed. Whatever was at `path`
    /// is unlinked first — a link planted there is removed, never followed — and the file is
    /// created exclusively, so what is written goes only into a file just made.
    package static func writeNew(_ path: String, _ bytes: [UInt8], durable: Bool) throws(FileFailure) {
        try remove(path)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FileFailure(.system, "cannot create \(path): \(errorText())") }
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

    /// Renames `from` over `to` (atomic: a reader sees the old file or the new one); on failure,
    /// `from` is removed.
    package static func move(_ from: String, to: String) throws(FileFailure) {
        guard rename(from, to) == 0 else {
            let text = errorText()
            unlink(from)
            throw FileFailure(.system, "cannot rename \(from) to \(to): \(text)")
        }
    }

    /// Unlinks `path` when it exists (never following a link).
    package static func remove(_ path: String) throws(FileFailure) {
        guard unlink(path) == 0 || errno == ENOENT else { throw FileFailure(.system, "cannot remove \(path): \(errorText())") }
    }
}
