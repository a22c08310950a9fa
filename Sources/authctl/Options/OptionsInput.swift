import Glibc

/// Reads the options JSON of `--options FILE` or `--options -` (stdin), whole, up to ``limit``:
/// every failure — a directory, a closed stdin, a read error, too many bytes — is `badInput`.
enum OptionsInput {
    /// Options JSON is small (a long excludeCredentials list is a few kilobytes); anything near
    /// this is not options.
    static let limit = 1 << 20

    static func read(_ source: String) throws(CLIError) -> [UInt8] {
        guard source != "-" else {
            guard !Output.closedAtStart.contains(STDIN_FILENO) else {
                throw CLIError(.badInput, "--options -: stdin is closed")
            }
            return try readAll(STDIN_FILENO, name: "stdin")
        }
        let fd = open(source, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CLIError(.badInput, "cannot read options file \(source): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        return try readAll(fd, name: "options file \(source)")
    }

    private static func readAll(_ fd: Int32, name: String) throws(CLIError) -> [UInt8] {
        var st = stat()
        if fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR { throw CLIError(.badInput, "cannot read \(name): it is a directory") }
        var out = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                switch errno {
                case EINTR: continue
                case EAGAIN:
                    Output.awaitReady(fd, for: POLLIN)
                    continue
                default: throw CLIError(.badInput, "cannot read \(name): \(String(cString: strerror(errno)))")
                }
            }
            if n == 0 { return out }
            guard out.count + n <= limit else {
                throw CLIError(.badInput, "\(name) holds more than \(limit) bytes, the most options JSON may be")
            }
            out += chunk[0..<n]
        }
    }
}
