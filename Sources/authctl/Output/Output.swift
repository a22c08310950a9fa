import Glibc

/// Where output goes: data to stdout only, diagnostics to stderr only. Writes are checked: data
/// that cannot be written (a closed pipe, a full disk, a file-size limit) is an `ioError`, never a
/// signal — ``prepareProcess()`` turns SIGPIPE and SIGXFSZ into errors a write returns.
enum Output {
    /// Standard streams that were closed when the process started. Each was reopened on
    /// /dev/null, so that no file the vault opens can take its number and receive output.
    nonisolated(unsafe) private(set) static var closedAtStart: Set<Int32> = []

    /// Run first: ignore the signals a failed write raises, and keep descriptors 0–2 taken.
    static func prepareProcess() {
        signal(SIGPIPE, SIG_IGN)
        signal(SIGXFSZ, SIG_IGN)
        // stdout or stderr opened for reading only (`1</dev/null`) can take no output either.
        for fd in [STDOUT_FILENO, STDERR_FILENO] where fcntl(fd, F_GETFL) & O_ACCMODE == O_RDONLY {
            closedAtStart.insert(fd)
        }
        for fd in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] where fcntl(fd, F_GETFD) == -1 && errno == EBADF {
            closedAtStart.insert(fd)
            let null = open("/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY)
            if null >= 0 && null != fd {
                dup2(null, fd)
                close(null)
            }
        }
    }

    /// A line of data (JSON, a listing) on stdout, exactly as given.
    static func data(_ line: String) throws(CLIError) {
        try requireStdout()
        if let failure = write(line + "\n", to: STDOUT_FILENO) {
            throw CLIError(.ioError, "cannot write to stdout: \(failure)")
        }
    }

    /// Bytes on stdout, exactly as given (a DER certificate).
    static func bytes(_ bytes: [UInt8]) throws(CLIError) {
        try requireStdout()
        if let failure = write(bytes, to: STDOUT_FILENO) {
            throw CLIError(.ioError, "cannot write to stdout: \(failure)")
        }
    }

    /// A line for people on stdout: control characters shown escaped, never acted on.
    static func text(_ line: String) throws(CLIError) {
        try data(TerminalText.escaped(line))
    }

    /// Fails before any work is done when stdout was closed.
    static func requireStdout() throws(CLIError) {
        if closedAtStart.contains(STDOUT_FILENO) {
            throw CLIError(.ioError, "stdout is closed or not open for writing; nothing was done")
        }
    }

    /// A message on stderr, control characters escaped (one line stays one line). A failure to
    /// write it cannot be reported anywhere; the exit code still tells.
    static func diagnostic(_ line: String) {
        _ = write(TerminalText.escaped(line) + "\n", to: STDERR_FILENO)
    }

    /// A JSON document on stderr (an error with `--json`), exactly as encoded.
    static func diagnosticJSON(_ json: String) {
        _ = write(json + "\n", to: STDERR_FILENO)
    }

    /// Waits until a non-blocking descriptor (one another program set so) can be read or written.
    static func awaitReady(_ fd: Int32, for events: Int32) {
        var ready = pollfd(fd: fd, events: Int16(events), revents: 0)
        _ = poll(&ready, 1, -1)
    }

    /// Writes all of `text`, waiting out a non-blocking descriptor; the error text on failure.
    private static func write(_ text: String, to fd: Int32) -> String? { write(Array(text.utf8), to: fd) }

    /// Writes all of `all`, waiting out a non-blocking descriptor; the error text on failure.
    private static func write(_ all: [UInt8], to fd: Int32) -> String? {
        var bytes = all[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                switch errno {
                case EINTR: continue
                case EAGAIN:
                    awaitReady(fd, for: POLLOUT)
                    continue
                default: return String(cString: strerror(errno))
                }
            }
            guard n > 0 else { return "nothing was written" }
            bytes = bytes.dropFirst(n)
        }
        return nil
    }
}
