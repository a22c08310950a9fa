import Glibc
import Session

/// The signal that interrupted the prompt (0: none). Written by a signal handler, read after the
/// interrupted `read` returns; a C `sig_atomic_t` in spirit.
nonisolated(unsafe) private var interruptingSignal: Int32 = 0

/// A no-echo prompt on the controlling terminal, for a secret typed by hand. Whatever happens —
/// the secret typed, Ctrl-C, SIGTERM, the terminal hanging up — echo is back on when it returns:
/// the signals that would end the process are caught for as long as echo is off, and end the
/// prompt instead (as `canceled`, the user having walked away from it).
enum TerminalPrompt {
    private static let interrupting = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    static func readWithoutEcho(_ prompt: String) throws(CLIError) -> SecureBytes {
        let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard tty >= 0 else { throw CLIError(.notInteractive, "cannot open the terminal to ask for a secret") }
        defer { close(tty) }
        var saved = termios()
        guard tcgetattr(tty, &saved) == 0 else { throw CLIError(.notInteractive, "cannot set up the terminal to ask for a secret") }

        // Catch the signals first, then turn echo off; undo in the reverse order.
        interruptingSignal = 0
        var previous: [(Int32, sigaction)] = []
        for number in interrupting {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { interruptingSignal = $0 }
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0  // no SA_RESTART: the blocked read returns EINTR
            var old = sigaction()
            sigaction(number, &action, &old)
            previous.append((number, old))
        }
        let stop = Glibc.signal(SIGTSTP, SIG_IGN)  // Ctrl-Z would leave the terminal silent until resumed
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(tty, TCSAFLUSH, &quiet)
        defer {
            tcsetattr(tty, TCSAFLUSH, &saved)
            _ = write(tty, "\n", 1)
            Glibc.signal(SIGTSTP, stop)
            for (number, old) in previous {
                var restore = old
                sigaction(number, &restore, nil)
            }
        }

        let text = TerminalText.escaped(prompt)
        _ = text.withCString { write(tty, $0, strlen($0)) }
        let buffer = SecureBytes(count: SecretSource.maximumLength + 1)
        var length = 0
        while true {
            // A signal can come just before `read` starts, where it would not interrupt it: wait
            // in short polls and look at the flag between them.
            var ready = pollfd(fd: tty, events: Int16(POLLIN), revents: 0)
            if interruptingSignal == 0 && poll(&ready, 1, 100) == 0 { continue }
            var byte: UInt8 = 0
            let n = interruptingSignal != 0 ? -1 : Glibc.read(tty, &byte, 1)
            if interruptingSignal != 0 {
                throw CLIError(.canceled, "the prompt was interrupted (signal \(interruptingSignal)); nothing was done")
            }
            if n < 0 && errno == EINTR { continue }
            if n == 0 && length == 0 {
                // Ctrl-D on an empty line: the user closed the prompt rather than answer it.
                throw CLIError(.canceled, "the prompt was closed (end of input); nothing was done")
            }
            if n <= 0 || byte == 0x0A { break }
            guard length < SecretSource.maximumLength else {
                throw CLIError(.badInput, "the secret typed is longer than \(SecretSource.maximumLength) bytes")
            }
            buffer.withUnsafeMutableBytes { $0[length] = byte }
            length += 1
        }
        return SecretSource.withoutNewline(buffer, length: length)
    }
}
