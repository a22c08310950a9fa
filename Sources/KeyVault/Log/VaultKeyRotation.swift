#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Changing the passphrase replaces the vault key, so an old copy of `header` with the old
/// passphrase opens nothing current: every record is written again, under the new key, as a new
/// generation of the log (as compaction writes one), and every sealed secret is sealed again.
///
/// Two files change — `header` (the new key, wrapped under the new passphrase) and `commit` (sealed
/// under the new key) — and no rename replaces two files at once. So the new commit pointer is
/// written first as `commit.next`, then `header` is replaced (the switch), then the old log is
/// deleted and `commit.next` renamed over `commit`. Opening reads `commit` and, when it does not open under the header's
/// key, `commit.next`: a crash at any point leaves the old vault (old header, old commit, old log)
/// or the new one (new header, `commit.next` or new commit, new log), never neither.
extension Vault {
    /// Replaces the vault key and wraps the new one under `passphrase` (at `kdf`, or the current
    /// level). `sealedFields` names, per record kind, the fields holding secrets sealed with
    /// ``sealSecret(_:recordId:)``; each is opened with the old key and sealed with the new one
    /// (a secret sealed under the biometry key too keeps that inner seal untouched).
    package func changePassphrase(to passphrase: SecureBytes, kdf: KDFLevel?,
                                 sealedFields: [VaultRecord.Kind: [UInt8]]) throws(VaultError) {
        guard access == .write else { throw VaultError(.inconsistent, "the vault was opened read-only") }
        let state = try stateLock(exclusive: true)
        defer { withExtendedLifetime(state) {} }
        try requireUnchanged()

        let newKey = Sodium.randomKey()
        var newHeader = header
        newHeader.opslimit = kdf?.opslimit ?? header.opslimit
        newHeader.memlimit = kdf?.memlimit ?? header.memlimit
        newHeader.salt = Sodium.randomBytes(Sodium.saltBytes)
        let wrapping = try Sodium.deriveKey(from: passphrase, salt: newHeader.salt, opslimit: newHeader.opslimit,
                                            memlimit: newHeader.memlimit)
        newHeader.wrappedKey = newKey.withUnsafeBytes { Sodium.seal($0, key: wrapping, associatedData: newHeader.associatedData) }

        // Every live record, its secrets sealed again under the new key.
        var rewritten = [VaultRecord]()
        for var record in try records {
            for tag in sealedFields[record.kind] ?? [] {
                guard let sealed = record.field(tag).map(Array.init) else { continue }
                let secret = try openSecret(sealed, recordId: record.id)
                record.setField(tag, secret.withUnsafeBytes { Sodium.seal($0, key: newKey, associatedData: secretAssociatedData(record.id)) })
            }
            rewritten.append(record)
        }

        // The next generation of the log, under the new key; then the switch.
        let next = generation + 1
        let (log, frames) = logBytes(rewritten, generation: next, key: newKey)
        let oldLog = logPath
        try POSIXFile.writeNew(Self.file(path, Self.logFile(next)), log, durable: durable)
        let pointer = CommitPointer(generation: next, frameCount: frames, logLength: UInt64(log.count))
            .sealed(key: newKey, vaultId: header.vaultId)
        try POSIXFile.writeNew(Self.file(path, Self.nextCommitFile), pointer, durable: durable)
        try POSIXFile.syncDirectory(path, durable: durable)
        try POSIXFile.replaceAtomically(Self.file(path, Self.headerFile), with: newHeader.bytes, directory: path, durable: durable)
        // From here the vault is the new one; the rest tidies up, and opening copes if it stops.
        // The new generation has no index yet: the next commit writes one.
        let oldIndex = Self.file(path, Self.indexFile(generation))
        index = nil
        namedIndex = nil
        header = newHeader
        key = newKey
        committedPointer = pointer
        generation = next
        frameCount = frames
        validLength = log.count
        fileLength = log.count
        for record in rewritten { applyInMemory(record) }
        // The old log goes first: from here an old copy of the header, with the old passphrase,
        // finds the old `commit` naming a log that is gone.
        unlink(oldLog)
        unlink(oldIndex)
        held?.commitReplaced()  // its descriptor names the `commit` about to be replaced
        try POSIXFile.renameFile(Self.file(path, Self.nextCommitFile), to: Self.file(path, Self.commitFile))
        try POSIXFile.syncDirectory(path, durable: durable)
    }
}
