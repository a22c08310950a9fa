import Glibc

/// Reads options JSON from a file or a descriptor, whole, up to ``limit`` bytes: never more is
/// held in memory, whatever the file's size (a FIFO, `/dev/zero` or a growing file included).
/// Shared by `--options FILE` at the command line and `options FILE` in a scenario.
package enum OptionsReader {
    /// Options JSON is small (a long excludeCredentials list is a few kilobytes); anything near
    /// this is not options.
    package static let limit = 1 << 20

    /// Why the options could not be read, in words that name the source.
    package struct Failure: Error, Sendable {
        package let message: String
    }

    /// The file at `path`; `name` is how messages call it ("options file x.json").
    package static func read(path: String, name: String) throws(Failure) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(message: "cannot read \(name): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        return try readAll(fd, name: name)
    }

    /// Everything `fd` holds up to end of file, waiting out a non-blocking descriptor.
    package static func readAll(_ fd: Int32, name: String) throws(Failure) -> [UInt8] {
        var st = stat()
        if fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR { throw Failure(message: "cannot read \(name): it is a directory") }
        var out = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                switch errno {
                case EINTR: continue
                case EAGAIN:
                    var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                    _ = poll(&ready, 1, -1)
                    continue
                default: throw Failure(message: "cannot read \(name): \(String(cString: strerror(errno)))")
                }
            }
            if n == 0 { return out }
            guard out.count + n <= limit else {
                throw Failure(message: "\(name) holds more than \(limit) bytes, the most options JSON may be")
            }
            out += chunk[0..<n]
        }
    }
}
