import Glibc

/// Where output goes: data to stdout only, diagnostics to stderr only.
enum Output {
    static func data(_ line: String) {
        write(line + "\n", to: STDOUT_FILENO)
    }

    static func diagnostic(_ line: String) {
        write(line + "\n", to: STDERR_FILENO)
    }

    private static func write(_ text: String, to fd: Int32) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return }
            bytes = bytes.dropFirst(n)
        }
    }
}
