import Glibc

/// Reads a scenario's text as the command line reads options: the file a path names (a symbolic
/// link followed, as every program follows one), or standard input for `-`; never more than
/// ``limit`` bytes held, whatever the source (a sparse file, a file that grows while it is read).
/// A FIFO or device named as a scenario is refused rather than waited on.
enum ScenarioFile {
    static func text(_ path: String, limit: Int) throws(ScenarioError) -> String {
        func failure(_ message: String) -> ScenarioError { ScenarioError(file: path, line: 0, message) }
        let fd: Int32
        if path == "-" {
            fd = STDIN_FILENO
        } else {
            // Non-blocking, so that a FIFO with no writer is opened (and refused below), not waited on.
            fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
            guard fd >= 0 else { throw failure("cannot read the scenario: \(String(cString: strerror(errno)))") }
        }
        defer { if fd != STDIN_FILENO { close(fd) } }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw failure("cannot read the scenario: \(String(cString: strerror(errno)))") }
        if fd != STDIN_FILENO {
            guard (st.st_mode & S_IFMT) == S_IFREG else { throw failure("the scenario is not a regular file") }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        } else if (st.st_mode & S_IFMT) == S_IFDIR {
            throw failure("cannot read the scenario: standard input is a directory")
        }
        var bytes = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                switch errno {
                case EINTR: continue
                case EAGAIN:  // a non-blocking standard input: wait for it
                    var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                    _ = poll(&ready, 1, -1)
                    continue
                default: throw failure("cannot read the scenario: \(String(cString: strerror(errno)))")
                }
            }
            if n == 0 { break }
            guard bytes.count + n <= limit else { throw failure("the scenario is larger than \(limit >> 20) MiB") }
            bytes += chunk[0..<n]
        }
        guard !bytes.contains(0), let text = String(validating: bytes, as: UTF8.self) else {
            throw failure("cannot read the scenario, or it is not UTF-8 text")
        }
        return text
    }
}
