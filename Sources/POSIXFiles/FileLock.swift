#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An advisory lock (`flock`) on a lock file, held for as long as this object lives: shared or
/// exclusive. The file is created if missing (0600), never through a link, and must be a regular
/// file of this user's. When another process holds the lock it is retried, with pauses from 1 ms
/// doubling up to 50 ms, until `wait` runs out — `waiting` is called once, so the caller can say
/// what it waits for — and then refused as ``FileFailure/Reason/busy``: a process never blocks
/// without a word or a limit. The vault's locks and the account store's are both this one.
package final class FileLock {
    private let fd: Int32

    package init(path: String, exclusive: Bool, wait: Duration, waiting: () -> Void = {}) throws(FileFailure) {
        let created = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
        guard created >= 0 else { throw Files.openFailure(path) }
        close(created)
        let fd = try Files.openOwned(path, O_RDWR)
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: wait)
        var pause = Duration.milliseconds(1)
        var announced = false
        while flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            guard code == EWOULDBLOCK else {
                close(fd)
                throw FileFailure(.system, "cannot lock \(path): \(Files.errorText(code))")
            }
            guard clock.now < deadline else {
                close(fd)
                throw FileFailure(.busy, "\(path) is still locked by another process after waiting \(wait.components.seconds) s")
            }
            if !announced {
                waiting()
                announced = true
            }
            Self.sleep(min(pause, deadline - clock.now))
            pause = min(pause * 2, .milliseconds(50))
        }
        self.fd = fd
    }

    deinit { close(fd) }  // closing releases the lock

    /// Sleeps the calling thread (the callers are synchronous).
    private static func sleep(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        guard seconds > 0 || attoseconds > 0 else { return }
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0, errno == EINTR { request = remaining }
    }
}
