import KeyVault

/// A value of the account's own metadata in the store — the device directory, the sync settings —
/// as records in the vault's batch encoding behind a format byte, sealed under the account key, so
/// the store sees only ciphertext and the value's size (docs/vault-format.md, "Store metadata"):
///
///     nonce (24) ‖ XChaCha20-Poly1305(account key, AD "AUTHCTL-META" ‖ account id ‖ key) of:
///         format u8 ‖ a vault batch of records
enum SealedMetadata {
    /// What a value held: its format and, when this version reads that format, its records.
    struct Opened {
        let format: UInt8
        let records: [VaultRecord]
    }

    private static func associatedData(accountId: [UInt8], key name: String) -> [UInt8] {
        Array("AUTHCTL-META".utf8) + accountId + Array(name.utf8)
    }

    static func seal(_ records: [VaultRecord], format: UInt8, key name: String, accountKey: SealingKey, accountId: [UInt8]) -> [UInt8] {
        accountKey.seal(plain(records, format: format), associatedData: associatedData(accountId: accountId, key: name))
    }

    /// The unsealed form (format ‖ batch), as a vault keeps the last value it read.
    static func plain(_ records: [VaultRecord], format: UInt8) -> [UInt8] {
        [format] + VaultDecoding.encodeBatch(records)
    }

    /// `nil`: the value does not open under this account's key (damaged, planted, another account's).
    /// A format above `known` opens with no records: this version must not read or rewrite it.
    static func open(_ bytes: [UInt8], known: UInt8, key name: String, accountKey: SealingKey, accountId: [UInt8]) -> Opened? {
        guard let plain = accountKey.open(bytes, associatedData: associatedData(accountId: accountId, key: name)) else { return nil }
        return parse(plain, known: known)
    }

    /// The unsealed form read back; `nil` when it does not decode.
    static func parse(_ plain: [UInt8], known: UInt8) -> Opened? {
        guard let format = plain.first, format >= 1 else { return nil }
        guard format <= known else { return Opened(format: format, records: []) }
        guard let records = try? VaultDecoding.batch(Array(plain.dropFirst()), context: "store metadata") else { return nil }
        return Opened(format: format, records: records)
    }
}
