#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An advisory lock (`flock`) on one of the vault's lock files, held for as long as this object
/// lives: shared or exclusive. When another process holds it, the lock is retried until `wait`
/// runs out — `waiting` is called once, so the caller can say what it waits for — and then
/// refused as `busy`; a process never blocks without a word or a limit.
final class VaultLock {
    private let fd: Int32

    init(path: String, exclusive: Bool, wait: Duration, waiting: () -> Void = {}) throws(VaultError) {
        fd = try POSIXFile.openLockFile(path)
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: wait)
        var pause = Duration.milliseconds(5)
        var announced = false
        while flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            guard code == EWOULDBLOCK else {
                close(fd)
                throw VaultError(.io, "cannot lock \(path): \(POSIXFile.errorText(code))")
            }
            guard clock.now < deadline else {
                close(fd)
                throw VaultError(.busy, "the vault is still in use by another process after waiting \(wait.components.seconds) s")
            }
            if !announced {
                waiting()
                announced = true
            }
            clock.sleepSynchronously(min(pause, deadline - clock.now))
            pause = min(pause * 2, .milliseconds(200))
        }
    }

    deinit { close(fd) }  // closing releases the lock
}

extension POSIXFile {
    /// A lock file: created if missing (0600), never through a link, and a regular file of ours.
    static func openLockFile(_ path: String) throws(VaultError) -> Int32 {
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw openFailure(path) }
        close(fd)
        return try openOwned(path, O_RDWR)
    }
}

extension ContinuousClock {
    /// Sleeps the calling thread (the vault's calls are synchronous).
    func sleepSynchronously(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        guard seconds > 0 || attoseconds > 0 else { return }
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0, errno == EINTR { request = remaining }
    }
}
