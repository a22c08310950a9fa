#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a held vault (``Vault/Sharing/held``) keeps from its creation until it is released: the
/// state lock, taken exclusively once, so no other process reads or writes the files meanwhile;
/// the descriptor of the current log, appended to at the committed end; and the descriptor of
/// `commit`, whose pointer is written over in place (the same 92 bytes at offset 0) rather than
/// replaced by a new file and a rename.
///
/// Writing `commit` in place is not atomic: a crash in the middle of it leaves a pointer that
/// opens as nothing. That is acceptable only because a held vault is its process's alone and is
/// deleted by it, never opened again after a crash (docs/vault-format.md, "Held vaults"). While
/// the process runs, what is on disk after each commit is an ordinary vault.
///
/// A write that fails drops the descriptor it went through: the next one opens the file again
/// (`commit`: replaces it whole, as a shared vault does), and the log is cut back to its
/// committed end before anything is appended after a failure.
final class HeldVaultFiles {
    /// The state lock (`lock`), exclusive for the vault's whole life.
    private let state: VaultLock
    /// The log being appended to, and its generation: a compaction or key rotation moves to the
    /// next one, which is opened at its first append.
    private var log: (generation: UInt64, fd: Int32)?
    private var commit: Int32?
    /// Whether bytes may follow the committed end of the log — a write that failed, or frames
    /// whose commit pointer was not written — so the next append cuts them off first. True for a
    /// log just opened, whose length this process has not checked.
    private var tailMayFollow = true

    /// The descriptors kept now (`nil`: none): for tests that make a write through them fail.
    var logDescriptor: Int32? { log?.fd }
    var commitDescriptor: Int32? { commit }

    init(state: VaultLock) {
        self.state = state
    }

    deinit {
        if let log { close(log.fd) }
        if let commit { close(commit) }
        withExtendedLifetime(state) {}
    }

    /// Appends `bytes` at `end`, the committed length of `path`, the log of `generation`.
    func append(_ bytes: [UInt8], to path: String, generation: UInt64, at end: Int, durable: Bool) throws(VaultError) {
        if let open = log, open.generation != generation {
            close(open.fd)
            log = nil
        }
        let fd: Int32
        if let open = log {
            fd = open.fd
        } else {
            fd = try POSIXFile.openOwned(path, O_WRONLY)
            log = (generation, fd)
            tailMayFollow = true
        }
        do throws(VaultError) {
            if tailMayFollow, ftruncate(fd, off_t(end)) != 0 {
                throw VaultError(.io, "cannot trim \(path): \(POSIXFile.errorText())")
            }
            tailMayFollow = true  // until the commit pointer names what is written now
            try POSIXFile.writeAll(fd, bytes, at: UInt64(end), path: path)
            try POSIXFile.sync(fd, path: path, durable: durable)
        } catch {
            close(fd)
            log = nil
            throw error
        }
    }

    /// The log ends where the commit pointer just written says.
    func logCommitted() { tailMayFollow = false }

    /// Writes `sealed` over the commit pointer at `path` in place; the first time (or after a
    /// failure, or after ``commitReplaced()``), replaces the file whole and keeps it open.
    func writeCommit(_ sealed: [UInt8], to path: String, directory: String, durable: Bool) throws(VaultError) {
        // Every pointer this process seals is the same size, so the file is exactly the new one
        // after it is written over.
        guard let fd = commit, sealed.count == CommitPointer.size else {
            commitReplaced()
            try POSIXFile.replaceAtomically(path, with: sealed, directory: directory, durable: durable)
            // The pointer is in place; without a descriptor, the next write replaces it again.
            commit = try? POSIXFile.openOwned(path, O_WRONLY)
            return
        }
        do throws(VaultError) {
            try POSIXFile.writeAll(fd, sealed, at: 0, path: path)
            try POSIXFile.sync(fd, path: path, durable: durable)
        } catch {
            close(fd)
            commit = nil
            throw error
        }
    }

    /// `commit` was replaced by another file (a key rotation renames `commit.next` over it): the
    /// descriptor kept names the old one, so the next write opens the new one.
    func commitReplaced() {
        if let commit { close(commit) }
        commit = nil
    }
}
