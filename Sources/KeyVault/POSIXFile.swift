#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The few file operations the vault needs, with errors that say which file and why.
enum POSIXFile {
    static func errorText() -> String { String(cString: strerror(errno)) }

    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// Entries of a directory, without `.` and `..`.
    static func entries(_ path: String) -> [String] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var out = [String]()
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { out.append(name) }
        }
        return out
    }

    static func makeDirectory(_ path: String) throws(VaultError) {
        if isDirectory(path) { return }
        let parent = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        if !parent.isEmpty, !isDirectory(parent) { try makeDirectory(parent) }
        guard mkdir(path, 0o700) == 0 || errno == EEXIST else {
            throw VaultError(.io, "cannot create directory \(path): \(errorText())")
        }
        // The new entry is durable only once its parent directory is flushed.
        try syncDirectory(parent.isEmpty ? (path.hasPrefix("/") ? "/" : ".") : parent)
    }

    static func readAll(_ path: String) throws(VaultError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw VaultError(errno == ENOENT ? .notFound : .io, "cannot read \(path): \(errorText())") }
        defer { close(fd) }
        var out = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = read(fd, &chunk, chunk.count)
            if n < 0 { if errno == EINTR { continue }; throw VaultError(.io, "cannot read \(path): \(errorText())") }
            if n == 0 { return out }
            out += chunk[0..<n]
        }
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws(VaultError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0 { if errno == EINTR { continue }; throw VaultError(.io, "cannot write \(path): \(errorText())") }
            offset += n
        }
    }

    static func sync(_ fd: Int32, path: String) throws(VaultError) {
        guard fsync(fd) == 0 else { throw VaultError(.io, "cannot flush \(path) to disk: \(errorText())") }
    }

    static func syncDirectory(_ path: String) throws(VaultError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw VaultError(.io, "cannot open directory \(path): \(errorText())") }
        defer { close(fd) }
        try sync(fd, path: path)
    }

    /// Replaces `path` atomically: write a temporary file (0600), flush it, rename it over the
    /// target, flush the directory. A reader sees the old file or the new one, never a mix.
    static func replaceAtomically(_ path: String, with bytes: [UInt8], directory: String) throws(VaultError) {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw VaultError(.io, "cannot create \(temporary): \(errorText())") }
        do {
            try writeAll(fd, bytes, path: temporary)
            try sync(fd, path: temporary)
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            throw VaultError(.io, "cannot rename \(temporary) to \(path): \(errorText())")
        }
        try syncDirectory(directory)
    }
}

/// An advisory lock (`flock`) on the vault's `lock` file, held for as long as this object lives:
/// shared for readers, exclusive for writers, so parallel processes never interleave a write.
final class VaultLock {
    private let fd: Int32

    init(path: String, exclusive: Bool) throws(VaultError) {
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw VaultError(.io, "cannot open lock file \(path): \(POSIXFile.errorText())") }
        while flock(fd, exclusive ? LOCK_EX : LOCK_SH) != 0 {
            if errno == EINTR { continue }
            let text = POSIXFile.errorText()
            close(fd)
            throw VaultError(.io, "cannot lock \(path): \(text)")
        }
    }

    deinit { close(fd) }  // closing releases the lock
}
