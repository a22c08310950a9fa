import Glibc
import KeyVault

/// A no-echo prompt on the controlling terminal, for a secret typed by hand.
enum TerminalPrompt {
    static func readWithoutEcho(_ prompt: String) throws(CLIError) -> SecureBytes {
        let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard tty >= 0 else { throw CLIError(.notInteractive, "cannot open the terminal to ask for a secret") }
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
        return SecretSource.withoutNewline(buffer, length: length)
    }
}
