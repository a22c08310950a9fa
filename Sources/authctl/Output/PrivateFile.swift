import Glibc
import Session

/// A new file only the user can read (0600), made exclusively — never over an existing file or
/// through a link — for a secret the command hands out (an exported passkey, a recovery secret).
/// Made before the work that fills it, so a path that cannot be used fails before anything
/// changes; removed again if the work fails.
struct PrivateFile {
    let path: String
    private let fd: Int32

    init(creating path: String) throws(CLIError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw CLIError(.ioError, "cannot create \(EchoedInput.path(path)): \(String(cString: strerror(errno)))") }
        self.path = path
        self.fd = fd
    }

    /// Writes `bytes`, flushes and closes; on failure the file is removed.
    func finish(_ bytes: [UInt8]) throws(CLIError) {
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let reason = String(cString: strerror(errno))
                abandon()
                throw CLIError(.ioError, "cannot write \(EchoedInput.path(path)): \(reason)")
            }
            written += n
        }
        guard fsync(fd) == 0, close(fd) == 0 else {
            unlink(path)
            throw CLIError(.ioError, "cannot write \(EchoedInput.path(path)): \(String(cString: strerror(errno)))")
        }
    }

    /// Closes and removes the file (the work that was to fill it failed).
    func abandon() {
        close(fd)
        unlink(path)
    }
}
