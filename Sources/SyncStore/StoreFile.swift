#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file operations ``DirectoryStore`` needs, on POSIX calls so every step is seen: no
/// symbolic link is followed, only regular files of this user's of a bounded size are read, new
/// files are created exclusively and flushed before they are named, and every failure says which
/// file and why. A directory that is missing is `unavailable` (a cloud that is down), not damage.
enum StoreFile {
    static func errorText(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }

    /// Whether a directory entry exists at `path` (a dangling link counts).
    static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// Makes directory `path` (0700) when it is missing, with its missing parents.
    static func makeDirectory(_ path: String, durable: Bool = true) throws(StoreError) {
        if isDirectory(path) { return }
        let parent = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        if !parent.isEmpty, !exists(parent) { try makeDirectory(parent, durable: durable) }
        guard mkdir(path, 0o700) == 0 || errno == EEXIST else {
            throw StoreError(.unavailable, "cannot create directory \(path): \(errorText())")
        }
        if durable { try syncDirectory(parent.isEmpty ? (path.hasPrefix("/") ? "/" : ".") : parent) }
    }

    /// Refuses what is not a directory of this user's that only this user can write to, or is a
    /// link: whoever can add or replace files in it could plant what the store then reads.
    static func requirePrivateDirectory(_ path: String) throws(StoreError) {
        var st = stat()
        guard lstat(path, &st) == 0 else {
            throw StoreError(.unavailable, "cannot inspect \(path): \(errorText())")
        }
        switch st.st_mode & S_IFMT {
        case S_IFDIR: break
        case S_IFLNK: throw StoreError(.unavailable, "\(path) is a symbolic link, which the store never follows")
        default: throw StoreError(.unavailable, "\(path) is not a directory")
        }
        guard st.st_uid == geteuid() else {
            throw StoreError(.unavailable, "\(path) belongs to another user (uid \(st.st_uid)); a store must be in a directory you own")
        }
        guard st.st_mode & 0o022 == 0 else {
            throw StoreError(.unavailable, "\(path) can be written by others (mode \(String(st.st_mode & 0o777, radix: 8))); run 'chmod 700 \(path)'")
        }
    }

    /// Entries of a directory, without `.` and `..`.
    static func listing(_ path: String) throws(StoreError) -> [String] {
        guard let dir = opendir(path) else { throw StoreError(.unavailable, "cannot list \(path): \(errorText())") }
        defer { closedir(dir) }
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        var out = [String]()
        while let entry = readdir(dir) {
            let name = String(cString: UnsafeRawPointer(entry).advanced(by: nameOffset).assumingMemoryBound(to: CChar.self))
            if name != "." && name != ".." { out.append(name) }
        }
        return out
    }

    /// The whole of regular file `path`, or `nil` when there is none. What is there and is not a
    /// regular file of this user's, or is longer than `limit`, is `corrupted`.
    static func read(_ path: String, limit: Int) throws(StoreError) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT { return nil }
            if code == ELOOP { throw StoreError(.corrupted, "\(path) is a symbolic link, which the store never follows") }
            throw StoreError(.unavailable, "cannot open \(path): \(errorText(code))")
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw StoreError(.unavailable, "cannot inspect \(path): \(errorText())") }
        guard (st.st_mode & S_IFMT) == S_IFREG else { throw StoreError(.corrupted, "\(path) is not a regular file") }
        guard st.st_uid == geteuid() else { throw StoreError(.corrupted, "\(path) belongs to another user (uid \(st.st_uid))") }
        guard Int(st.st_size) <= limit else {
            throw StoreError(.corrupted, "\(path) is \(st.st_size) bytes, more than the store reads (\(limit))")
        }
        var out = [UInt8](repeating: 0, count: Int(st.st_size))
        var length = 0
        while length < out.count {
            let n = out.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + length, $0.count - length, off_t(length)) }
            if n < 0 { if errno == EINTR { continue }; throw StoreError(.unavailable, "cannot read \(path): \(errorText())") }
            if n == 0 { break }
            length += n
        }
        out.removeLast(out.count - length)
        return out
    }

    /// Creates `path` afresh (0600) with `bytes`, flushed to disk. Whatever was at `path` is
    /// unlinked first — a planted link is removed, never followed.
    static func writeNew(durable: Bool = true, _ path: String, _ bytes: [UInt8]) throws(StoreError) {
        try remove(path)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StoreError(.unavailable, "cannot create \(path): \(errorText())") }
        var failure: StoreError?
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                failure = StoreError(.unavailable, "cannot write \(path): \(errorText())")
                break
            }
            offset += n
        }
        if failure == nil, durable, fsync(fd) != 0 { failure = StoreError(.unavailable, "cannot flush \(path) to disk: \(errorText())") }
        close(fd)
        if let failure {
            unlink(path)
            throw failure
        }
    }

    /// Renames `from` over `to` (atomic: a reader sees the old file or the new one).
    static func move(_ from: String, to: String) throws(StoreError) {
        guard rename(from, to) == 0 else {
            let text = errorText()
            unlink(from)
            throw StoreError(.unavailable, "cannot rename \(from) to \(to): \(text)")
        }
    }

    /// Writes `bytes` to a temporary file beside `path`, flushed, then renames it into place.
    static func replace(durable: Bool = true, _ path: String, with bytes: [UInt8]) throws(StoreError) {
        let temporary = path + ".\(getpid()).tmp"
        try writeNew(durable: durable, temporary, bytes)
        try move(temporary, to: path)
    }

    /// Unlinks `path` when it exists (never following a link).
    static func remove(_ path: String) throws(StoreError) {
        guard unlink(path) == 0 || errno == ENOENT else { throw StoreError(.unavailable, "cannot remove \(path): \(errorText())") }
    }

    static func syncDirectory(_ path: String) throws(StoreError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw StoreError(.unavailable, "cannot open directory \(path): \(errorText())") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw StoreError(.unavailable, "cannot flush \(path) to disk: \(errorText())") }
    }
}

/// An exclusive `flock` on the store's lock file, held while this lives; retried until `wait`
/// runs out, then refused as `unavailable` (another writer holds the store).
final class StoreLock {
    private let fd: Int32

    init(path: String, wait: Duration) throws(StoreError) {
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StoreError(.unavailable, "cannot open the store's lock \(path): \(StoreFile.errorText())") }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, st.st_uid == geteuid() else {
            close(fd)
            throw StoreError(.unavailable, "the store's lock \(path) is not a regular file of this user's")
        }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: wait)
        var pause = 1
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            guard code == EWOULDBLOCK, clock.now < deadline else {
                close(fd)
                throw StoreError(.unavailable, code == EWOULDBLOCK
                    ? "the store is still held by another writer after waiting \(wait.components.seconds) s"
                    : "cannot lock \(path): \(StoreFile.errorText(code))")
            }
            usleep(useconds_t(pause * 1000))
            pause = min(pause * 2, 50)
        }
        self.fd = fd
    }

    deinit { close(fd) }
}

/// The store's fixed-width integers (big-endian) and its checksum.
enum StoreBytes {
    static func of<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    static func integer<T: FixedWidthInteger>(_ bytes: ArraySlice<UInt8>) -> T {
        bytes.reduce(T(0)) { $0 << 8 | T($1) }
    }

    /// FNV-1a (64 bits): catches a torn or damaged file. Not authentication: the objects are
    /// sealed by whoever uploads them, and a reader trusts only what opens under its key.
    static func checksum(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return of(hash)
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes { out += [digits[Int(b >> 4)], digits[Int(b & 15)]] }
        return String(decoding: out, as: UTF8.self)
    }

    /// A sequence as a file name: 16 hex digits, so names sort as numbers do.
    static func name(_ sequence: UInt64) -> String { hex(of(sequence)) }
}
