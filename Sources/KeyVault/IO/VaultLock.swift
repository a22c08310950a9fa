import POSIXFiles

/// An advisory lock (``FileLock``) on one of the vault's lock files, held for as long as this
/// object lives: shared or exclusive. When another process holds it, the lock is retried until
/// `wait` runs out — `waiting` is called once, so the caller can say what it waits for — and then
/// refused as `busy`; a process never blocks without a word or a limit.
final class VaultLock {
    private let lock: FileLock

    init(path: String, exclusive: Bool, wait: Duration, waiting: () -> Void = {}) throws(VaultError) {
        do throws(FileFailure) {
            lock = try FileLock(path: path, exclusive: exclusive, wait: wait, waiting: waiting)
        } catch where error.reason == .busy {
            throw VaultError(.busy, "the vault is still in use by another process after waiting \(wait.components.seconds) s")
        } catch {
            throw VaultError(error)
        }
    }
}
