import Glibc
import KeyVault

/// Reads a ``Secret`` from the first of three places that has it: a file named by a flag, an
/// environment variable, or a no-echo prompt when stdin is a terminal. Secrets go straight into
/// `SecureBytes`; no Swift string ever holds one.
enum SecretSource {
    /// The secret, or `notInteractive` when none of the three places can give it.
    static func read(_ secret: Secret, file: String?, fileOption: String) throws(CLIError) -> SecureBytes {
        if let file { return try fromFile(file) }
        if let value = getenv(secret.environment) {
            return SecureBytes(copying: UnsafeRawBufferPointer(start: value, count: strlen(value)))
        }
        guard isatty(STDIN_FILENO) == 1 else { throw CLIError(.notInteractive, secret.missing(fileOption: fileOption)) }
        return try TerminalPrompt.readWithoutEcho(secret.prompt)
    }

    static let maximumLength = 4095

    /// The file's bytes, less one trailing newline.
    private static func fromFile(_ path: String) throws(CLIError) -> SecureBytes {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CLIError(.badInput, "cannot read \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let buffer = SecureBytes(count: maximumLength + 1)
        var length = 0
        while length < buffer.count {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + length, $0.count - length) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw CLIError(.badInput, "cannot read \(path): \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            length += n
        }
        guard length <= maximumLength else { throw CLIError(.badInput, "\(path) is longer than \(maximumLength) bytes") }
        return withoutNewline(buffer, length: length)
    }

    /// The first `length` bytes of `buffer`, less one trailing `\n` or `\r\n`.
    static func withoutNewline(_ buffer: SecureBytes, length: Int) -> SecureBytes {
        var end = length
        buffer.withUnsafeBytes { b in
            guard end > 0, b[end - 1] == 0x0A else { return }
            end -= 1
            if end > 0, b[end - 1] == 0x0D { end -= 1 }
        }
        return buffer.prefix(end)
    }
}
