import KeyVault
import VirtualAuthenticator

/// The account's own fields, in the vault's settings record beside the first device's: the account
/// key that seals what goes to the store, the account id, the seed of its delays, how it reports
/// backup state, its default delays, and where its store is. The seed and delays are histories
/// (``SettingHistory``): a transfer takes those in force when it started. Tags in docs/vault-format.md.
struct AccountSettings {
    enum Tag {
        static let accountKey: UInt8 = 20, accountId: UInt8 = 21, seed: UInt8 = 22, backupStateImmediate: UInt8 = 23
        static let uploadDelay: UInt8 = 24, downloadDelay: UInt8 = 25, storePath: UInt8 = 26
        /// The attestation CA (root, intermediate and their keys, the batch key), sealed; 27 and
        /// 28 are the first device's profile fields.
        static let attestationCA: UInt8 = 29
    }

    let accountKey: SealingKey
    let accountId: [UInt8]
    let seed: SettingHistory<Seed>
    /// Report BS=1 from a passkey's creation (as Apple does), rather than once its upload landed.
    let backupStateImmediate: Bool
    let uploadDelay: SettingHistory<DelayRange>
    let downloadDelay: SettingHistory<DelayRange>
    /// `nil`: the default, `<vault>/cloud`.
    let storePath: String?

    /// Reads the account's fields; a vault from before accounts gets them (a new account key and
    /// id) the first time a writer opens it.
    static func read(in vault: Vault) throws(VaultError) -> AccountSettings {
        let settings = try DeviceRecord.all(in: vault)[0].record
        if settings.field(Tag.accountKey) == nil {
            guard vault.access == .write else {
                // A reader of a vault from before accounts: an account of its own, in memory only.
                return AccountSettings(accountKey: .random(), accountId: VaultRecord.newId(), seed: SettingHistory(),
                                       backupStateImmediate: false, uploadDelay: SettingHistory(), downloadDelay: SettingHistory(),
                                       storePath: nil)
            }
            try DeviceRecord.update(settings.id, in: vault) { record throws(VaultError) in
                record.setField(Tag.accountKey, vault.sealSecret(SealingKey.random(), recordId: record.id))
                record.setField(Tag.accountId, VaultRecord.newId())
            }
            return try read(in: vault)
        }
        let record = settings
        let key = try vault.openSealingKey(Array(record.field(Tag.accountKey)!), recordId: record.id)
        guard let id = record.field(Tag.accountId).map(Array.init), id.count == 16 else {
            throw VaultError(.corrupted, "the account id is missing or malformed")
        }
        func history<Value>(_ tag: UInt8, _ what: String) throws(VaultError) -> SettingHistory<Value> {
            guard let bytes = record.field(tag) else { return SettingHistory() }
            guard let history = SettingHistory<Value>(bytes: bytes) else { throw VaultError(.corrupted, "the account's \(what) is malformed") }
            return history
        }
        let path = record.field(Tag.storePath).flatMap { String(validating: Array($0), as: UTF8.self) }
        return AccountSettings(
            accountKey: key, accountId: id, seed: try history(Tag.seed, "seed"),
            backupStateImmediate: record.field(Tag.backupStateImmediate)?.elementsEqual([1]) ?? false,
            uploadDelay: try history(Tag.uploadDelay, "upload delay"), downloadDelay: try history(Tag.downloadDelay, "download delay"),
            storePath: path)
    }

    /// The fields of a new account, for the first device's settings record.
    /// `ca`: the attestation CA the account uses (a new one when `nil`).
    static func initialize(_ record: inout VaultRecord, in vault: Vault, ca: AttestationCA? = nil) throws(VaultError) {
        record.setField(Tag.accountKey, vault.sealSecret(SealingKey.random(), recordId: record.id))
        record.setField(Tag.accountId, VaultRecord.newId())
        record.setField(Tag.attestationCA, try sealedNewCA(in: vault, recordId: record.id, ca: ca))
    }

    /// An attestation CA (`ca`, or a new one), sealed for the settings record `recordId`.
    static func sealedNewCA(in vault: Vault, recordId: [UInt8], ca: AttestationCA? = nil) throws(VaultError) -> [UInt8] {
        var serialized: [UInt8]
        do { serialized = try (ca ?? AttestationCA.generate()).serialized() } catch {
            throw VaultError(.inconsistent, "OpenSSL could not make the attestation CA: \(error)")  // nothing of the caller's in it
        }
        defer { for i in serialized.indices { serialized[i] = 0 } }
        return serialized.withUnsafeBytes { vault.sealSecret($0, recordId: recordId) }
    }
}
