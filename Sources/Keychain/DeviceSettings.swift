import KeyVault

/// The vault's one settings record, typed: the biometric enrollment and the failure count. Field
/// tags are in docs/vault-format.md; tags this version does not know are kept as they were.
struct DeviceSettings {
    enum Tag {
        static let salt: UInt8 = 2, wrappedKey: UInt8 = 3, failures: UInt8 = 4, maxAttempts: UInt8 = 5
        static let opslimit: UInt8 = 6, memlimit: UInt8 = 7
    }

    static let defaultMaxAttempts: UInt32 = 5

    private(set) var record: VaultRecord
    var enrollment: BiometryEnrollment?
    var failures: UInt32
    var maxAttempts: UInt32

    var lockedOut: Bool { enrollment != nil && failures >= maxAttempts }

    init(in vault: Vault) throws(VaultError) {
        let all = vault.records(kind: .settings)
        guard all.count == 1, let record = all.first else {
            throw VaultError(.corrupted, "the vault has \(all.count) settings records; it must have exactly one")
        }
        self.record = record
        if let salt = record.field(Tag.salt), let wrapped = record.field(Tag.wrappedKey) {
            guard let opslimit = try record.integer(Tag.opslimit, as: UInt64.self),
                  let memlimit = try record.integer(Tag.memlimit, as: UInt64.self)
            else { throw VaultError(.corrupted, "the biometric enrollment lacks its KDF limits") }
            enrollment = try BiometryEnrollment(salt: Array(salt), wrappedKey: Array(wrapped), opslimit: opslimit, memlimit: memlimit)
        }
        failures = try record.integer(Tag.failures, as: UInt32.self) ?? 0
        maxAttempts = try record.integer(Tag.maxAttempts, as: UInt32.self) ?? Self.defaultMaxAttempts
    }

    /// The first settings record of a new vault.
    static func newRecord(enrollment: BiometryEnrollment?, maxAttempts: UInt32) -> VaultRecord {
        fields(of: VaultRecord(id: VaultRecord.newId(), kind: .settings), enrollment: enrollment, failures: 0,
               maxAttempts: maxAttempts)
    }

    /// The next version of the record, as the settings stand now.
    var updatedRecord: VaultRecord {
        var next = record
        next.version += 1
        return Self.fields(of: next, enrollment: enrollment, failures: failures, maxAttempts: maxAttempts)
    }

    /// Commits the settings as they stand; on success they are the vault's.
    mutating func commit(to vault: Vault, with others: [VaultRecord] = []) throws(VaultError) {
        let next = updatedRecord
        try vault.commit(others + [next])
        record = next
    }

    private static func fields(of record: VaultRecord, enrollment: BiometryEnrollment?, failures: UInt32,
                               maxAttempts: UInt32) -> VaultRecord {
        var out = record
        out.setInteger(Tag.failures, failures)
        out.setInteger(Tag.maxAttempts, maxAttempts)
        out.setField(Tag.salt, enrollment?.salt)
        out.setField(Tag.wrappedKey, enrollment?.wrappedKey)
        out.setInteger(Tag.opslimit, enrollment?.opslimit)
        out.setInteger(Tag.memlimit, enrollment?.memlimit)
        return out
    }
}
