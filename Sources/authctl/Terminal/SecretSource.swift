import Glibc
import Session

/// Reads a ``Secret`` from the first of three places that has it: a file named by a flag, an
/// environment variable, or a no-echo prompt when stdin is a terminal. Secrets go straight into
/// `SecureBytes`; no Swift string ever holds one. Every source has the same limit, so a secret
/// that works from one works from the others.
enum SecretSource {
    /// The longest secret, in bytes: what a terminal line can hold (4,095 bytes and a newline).
    static let maximumLength = 4095

    /// The secret, or `notInteractive` when none of the three places can give it. A new secret
    /// typed at the terminal is asked for twice and must match.
    static func read(_ secret: Secret, file: String?, fileOption: String) throws(CLIError) -> SecureBytes {
        if let file { return try fromFile(file) }
        if let value = getenv(secret.environment.name) {
            let length = strlen(value)
            guard length <= maximumLength else {
                throw CLIError(.badInput, "$\(secret.environment.name) is longer than \(maximumLength) bytes")
            }
            return SecureBytes(copying: UnsafeRawBufferPointer(start: value, count: length))
        }
        guard isatty(STDIN_FILENO) == 1 else { throw CLIError(.notInteractive, secret.missing(fileOption: fileOption)) }
        let typed = try TerminalPrompt.readWithoutEcho(secret.prompt)
        if secret.isNew {
            let again = try TerminalPrompt.readWithoutEcho("Again, to confirm: ")
            guard typed == again else { throw CLIError(.badInput, "the two entries did not match; nothing was changed") }
        }
        return typed
    }

    /// The file's bytes, less one trailing newline.
    private static func fromFile(_ path: String) throws(CLIError) -> SecureBytes {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CLIError(.badInput, "cannot read \(EchoedInput.path(path)): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        // Room for the longest secret, its "\r\n", and one byte more to see that it is too long.
        let buffer = SecureBytes(count: maximumLength + 3)
        var length = 0
        while length < buffer.count {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + length, $0.count - length) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw CLIError(.badInput, "cannot read \(EchoedInput.path(path)): \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            length += n
        }
        let secret = withoutNewline(buffer, length: length)
        guard secret.count <= maximumLength, length < buffer.count else {
            throw CLIError(.badInput, "\(EchoedInput.path(path)) is longer than \(maximumLength) bytes")
        }
        return secret
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
