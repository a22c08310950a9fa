import Glibc
import KeyVault
import VirtualAuthenticator

/// Secrets from the three places a user can give them, in order: a file named by a flag, an
/// environment variable, or a no-echo prompt when stdin is a terminal.
enum SecretSource {
    /// Reads a secret; `nil` when none of the sources is available.
    static func read(file: String?, environment: String, prompt: String) throws(AuthenticatorError) -> SecureBytes? {
        if let file { return try fromFile(file) }
        if let value = getenv(environment) {
            let length = strlen(value)
            return SecureBytes(copying: UnsafeRawBufferPointer(start: value, count: length))
        }
        guard isatty(STDIN_FILENO) == 1 else { return nil }
        return try promptWithoutEcho(prompt)
    }

    /// The file's bytes, less one trailing newline.
    private static func fromFile(_ path: String) throws(AuthenticatorError) -> SecureBytes {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw AuthenticatorError(.badInput, "cannot read \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let buffer = SecureBytes(count: 4096)
        var length = 0
        while length < buffer.count {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + length, $0.count - length) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw AuthenticatorError(.badInput, "cannot read \(path): \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            length += n
        }
        guard length < buffer.count else { throw AuthenticatorError(.badInput, "\(path) is longer than 4095 bytes") }
        return trimmed(buffer, length: length)
    }

    private static func trimmed(_ buffer: SecureBytes, length: Int) -> SecureBytes {
        var end = length
        buffer.withUnsafeBytes { b in
            guard end > 0, b[end - 1] == 0x0A else { return }  // "\n" or "\r\n", nothing else
            end -= 1
            if end > 0, b[end - 1] == 0x0D { end -= 1 }
        }
        return buffer.prefix(end)
    }

    private static func promptWithoutEcho(_ prompt: String) throws(AuthenticatorError) -> SecureBytes {
        let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard tty >= 0 else { throw AuthenticatorError(.notInteractive, "cannot open the terminal to ask for a secret") }
        defer { close(tty) }
        var saved = termios()
        tcgetattr(tty, &saved)
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(tty, TCSAFLUSH, &quiet)
        defer { tcsetattr(tty, TCSAFLUSH, &saved); _ = write(tty, "\n", 1) }
        _ = prompt.withCString { write(tty, $0, strlen($0)) }
        let buffer = SecureBytes(count: 1024)
        var length = 0
        while length < buffer.count {
            var byte: UInt8 = 0
            let n = Glibc.read(tty, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 || byte == 0x0A { break }
            buffer.withUnsafeMutableBytes { $0[length] = byte }
            length += 1
        }
        return trimmed(buffer, length: length)
    }
}

/// Where output goes: data to stdout only, diagnostics to stderr only.
enum Output {
    static func data(_ line: String) {
        print(line)
    }

    static func diagnostic(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        bytes.withUnsafeBytes { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}
