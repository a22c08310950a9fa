import KeyVault
import VirtualAuthenticator

/// The private keys an open account has loaded, by revision id: at most ``limit``, the least
/// recently used going first when a new one needs the room. Loading a key costs as much as a
/// signature, and a device in a load test signs with the same passkeys again and again. A hit is
/// one dictionary look-up. When full, a new key makes room for a sixteenth of the limit at once
/// (at least one), the least recently used: one sort every `limit / 16` misses rather than a scan
/// of every entry at each, so a ring of thousands costs a miss no more than one of hundreds.
///
/// A key opened under a biometry key (a passkey made with user verification) is named `0xFF` ‖
/// its revision id ‖ the biometry key's tag, and marked: such keys leave when what opened them is
/// forgotten (``forgetVerified()``: a re-enrollment, a reset, a device's removal), and a passkey's
/// keys leave with its deletion (``forget(revision:)``) or follow it to a new revision
/// (``move(revision:to:)``, a sign count or large blob written), so no key outlives its passkey in
/// the ring or piles up one copy per revision.
struct Keyring<Key> {
    let limit: Int
    private var entries = [[UInt8]: (key: Key, lastUse: UInt64, verified: Bool, revision: [UInt8])]()
    /// The names of the verified entries, by the revision id they hold the key of: a revision's
    /// keys are found with two look-ups, not a scan of the ring.
    private var verifiedNames = [[UInt8]: [[UInt8]]]()
    private var verifiedCount = 0
    /// Counts uses: an entry's `lastUse` is the count at its last use.
    private var uses: UInt64 = 0

    init(limit: Int) {
        precondition(limit > 0, "a keyring holds at least one key")
        self.limit = limit
    }

    var count: Int { entries.count }
    /// How many of them are named by a revision id alone (not opened under a biometry key).
    var plainCount: Int { entries.count - verifiedCount }
    /// How many keys were loaded (misses), for tests and profiles.
    private(set) var loads = 0

    func contains(_ id: [UInt8]) -> Bool { entries[id] != nil }

    /// The key of revision `id`: the one kept, or `load()`'s, kept from now on.
    /// `verifiedRevision`: the key is opened under a biometry key, named `0xFF` ‖ that revision id ‖
    /// the key's tag.
    mutating func key<Failure: Error>(for id: [UInt8], verifiedRevision: [UInt8]? = nil,
                                      loading load: () throws(Failure) -> Key) throws(Failure) -> Key {
        uses += 1
        if let kept = entries[id] {
            entries[id]!.lastUse = uses
            return kept.key
        }
        let key = try load()
        loads += 1
        keep(key, for: id, verifiedRevision: verifiedRevision)
        return key
    }

    /// Keeps `key` as revision `id`'s, the most recently used (a key the account has in hand
    /// already: a registration's new key, kept for the sign-ins that follow).
    mutating func keep(_ key: Key, for id: [UInt8], verifiedRevision: [UInt8]? = nil) {
        uses += 1
        if entries[id] == nil, entries.count >= limit {
            let room = max(1, limit / 16)
            for oldest in entries.sorted(by: { $0.value.lastUse < $1.value.lastUse }).prefix(room) { remove(oldest.key) }
        }
        remove(id)
        insert(name: id, (key, uses, verifiedRevision != nil, verifiedRevision ?? id))
    }

    private mutating func insert(name: [UInt8], _ entry: (key: Key, lastUse: UInt64, verified: Bool, revision: [UInt8])) {
        entries[name] = entry
        if entry.verified {
            verifiedCount += 1
            verifiedNames[entry.revision, default: []].append(name)
        }
    }

    private mutating func remove(_ name: [UInt8]) {
        guard let gone = entries.removeValue(forKey: name), gone.verified else { return }
        verifiedCount -= 1
        verifiedNames[gone.revision]?.removeAll { $0 == name }
        if verifiedNames[gone.revision]?.isEmpty == true { verifiedNames[gone.revision] = nil }
    }

    /// The names of revision `id`'s keys: its own, and those opened under a biometry key.
    private func names(ofRevision id: [UInt8]) -> [[UInt8]] {
        (entries[id] == nil || entries[id]!.verified ? [] : [id]) + (verifiedNames[id] ?? [])
    }

    /// Drops revision `id`'s keys (its passkey deleted or replaced).
    mutating func forget(revision id: [UInt8]) {
        for name in names(ofRevision: id) { remove(name) }
    }

    /// Renames revision `old`'s keys as revision `new`'s: the same private key, sealed again for a
    /// new revision of its passkey.
    mutating func move(revision old: [UInt8], to new: [UInt8]) {
        for name in names(ofRevision: old) {
            guard var entry = entries[name] else { continue }
            remove(name)
            let renamed = entry.verified ? [0xFF] + new + name[(1 + old.count)...] : new
            remove(renamed)
            entry.revision = new
            insert(name: renamed, entry)
        }
    }

    /// Drops every key opened under a biometry key: what opened them was forgotten.
    mutating func forgetVerified() {
        guard verifiedCount > 0 else { return }
        entries = entries.filter { !$0.value.verified }
        verifiedNames = [:]
        verifiedCount = 0
    }

    /// Drops every key: the device they were opened for was reset or removed.
    mutating func forgetAll() {
        entries = [:]
        verifiedNames = [:]
        verifiedCount = 0
    }
}

/// The passkeys' private keys: opened for one signature, kept in the keyring, or sealed again for a
/// new revision.
extension Account {
    /// How many loaded keys an open account keeps: enough for every passkey of a dense account
    /// (a simulated day of a thousand passkeys, each signed in hours after it was made), bounded
    /// (some 3 KiB each as OpenSSL holds them: 12 MiB at most).
    static let signingKeyLimit = 4096

    /// A passkey revision's private key, opened for one signature: from this vault or from the
    /// store, through the biometry key when it was made with user verification.
    func privateKey(of revision: Revision, itemId: [UInt8], biometryKey: SecureBytes?) throws(VaultError) -> SecureBytes {
        guard let sealed = revision.sealedKey else { throw VaultError(.corrupted, "a passkey revision has no private key") }
        switch revision.source {
        case .local:
            guard let biometryKey else { return try vault.openSecret(sealed, recordId: revision.id) }
            if let elsewhere = revision.sealedInVault {
                return try vault.openBiometrySealed(try vault.openSecret(sealed, recordId: revision.id), itemId: itemId,
                                                    biometryKey: biometryKey, vaultId: elsewhere)
            }
            return try vault.openSecret(sealed, recordId: revision.id, biometryKey: biometryKey, itemId: itemId)
        case .store:
            let outer = try openStoreSealed(sealed, of: revision)
            guard let biometryKey else { return outer }
            return try vault.openBiometrySealed(outer, itemId: itemId, biometryKey: biometryKey, vaultId: revision.sealedInVault)
        }
    }

    /// The private key of `revision`, a passkey made without user verification, loaded once and
    /// kept in ``ReadModel/keyring`` while the account is open.
    func signingKey(of revision: Revision, itemId: [UInt8]) throws(VaultError) -> PrivateKey {
        try readModel.keyring.key(for: revision.id) { () throws(VaultError) -> PrivateKey in
            try loadedKey(of: revision, itemId: itemId, biometryKey: nil)
        }
    }

    /// The private key of `revision`, a passkey made with user verification, for a ceremony whose
    /// biometric check gave `unlock`: opened under its biometry key once, then kept in the keyring
    /// by `0xFF` ‖ the revision's id ‖ the key's tag (``BiometricSensor/Unlock/keyTag``), a name no
    /// revision id alone can take. Only a call
    /// with an ``BiometricSensor/Unlock`` reaches it — the sensor makes one only for a PIN checked
    /// in this ceremony — and only one from the same biometry key finds it; ``signingKey(of:itemId:)``
    /// never does (its entries are named by the revision id alone).
    func signingKey(of revision: Revision, itemId: [UInt8], verifiedBy unlock: BiometricSensor.Unlock) throws(VaultError) -> PrivateKey {
        try readModel.keyring.key(for: [0xFF] + revision.id + unlock.keyTag, verifiedRevision: revision.id) { () throws(VaultError) -> PrivateKey in
            try loadedKey(of: revision, itemId: itemId, biometryKey: unlock.biometryKey)
        }
    }

    /// Keeps `key`, the private key of the passkey revision `revisionId` this account has just
    /// committed (a registration's new key), under the name a sign-in looks it up by: the
    /// revision id alone for a passkey made without user verification, or as
    /// ``signingKey(of:itemId:verifiedBy:)`` names it, behind the proof `unlock` of the check
    /// that sealed it. A revision id is never reused, so a passkey deleted and made again is
    /// never signed for with the key kept for the one before.
    func keepSigningKey(_ key: PrivateKey, ofNewRevision revisionId: [UInt8], verifiedBy unlock: BiometricSensor.Unlock?) {
        readModel.keyring.keep(key, for: unlock.map { [0xFF] + revisionId + $0.keyTag } ?? revisionId,
                               verifiedRevision: unlock == nil ? nil : revisionId)
    }

    /// ``privateKey(of:itemId:biometryKey:)`` as OpenSSL holds it, for one signature.
    func loadedKey(of revision: Revision, itemId: [UInt8], biometryKey: SecureBytes?) throws(VaultError) -> PrivateKey {
        let der = try privateKey(of: revision, itemId: itemId, biometryKey: biometryKey)
        do {
            return try der.withUnsafeBytes { buffer throws(OpenSSLFailure) in try PrivateKey.load(der: buffer) }
        } catch {
            throw VaultError(.corrupted, "the private key of a passkey revision cannot be read: \(error)")
        }
    }

    /// `revision`'s private key sealed again for a new revision `newId` of this vault (its inner,
    /// biometry-key seal, if any, untouched).
    func resealKey(of revision: Revision, into newId: [UInt8]) throws(VaultError) -> [UInt8] {
        guard let sealed = revision.sealedKey else { throw VaultError(.corrupted, "a passkey revision has no private key") }
        switch revision.source {
        case .local: return try vault.resealSecret(sealed, from: revision.id, to: newId)
        case .store:
            let outer = try openStoreSealed(sealed, of: revision)
            return outer.withUnsafeBytes { vault.sealSecret($0, recordId: newId) }
        }
    }

    /// The seal a revision from the account store has around its private key, opened with the
    /// account key.
    private func openStoreSealed(_ sealed: [UInt8], of revision: Revision) throws(VaultError) -> SecureBytes {
        guard let outer = settings.accountKey.openSecret(
            sealed, associatedData: StorePack.itemAssociatedData(accountId: settings.accountId, revisionId: revision.id))
        else { throw VaultError(.corrupted, "a passkey from the account store failed authentication") }
        return outer
    }
}
