import KeyVault

/// An object of the account store: the revisions one upload carried, each with the moment it
/// landed, sealed under the account key — the store sees only ciphertext and the object's name.
///
///     name: 32 hex digits (16 random bytes)
///     nonce (24) ‖ XChaCha20-Poly1305(account key, AD "AUTHCTL-STORE" ‖ account id ‖ name bytes) of:
///         count u32 ‖ count × landedAt (ms u64 ‖ order u64) ‖ a vault batch of the `count` revision records
///
/// Inside each record, the private key (tag 10) is sealed under the account key too (AD
/// "AUTHCTL-ITEM" ‖ account id ‖ revision id), around the biometry-key seal a passkey made with user
/// verification also has.
enum StorePack {
    static func itemAssociatedData(accountId: [UInt8], revisionId: [UInt8]) -> [UInt8] {
        Array("AUTHCTL-ITEM".utf8) + accountId + revisionId
    }

    private static func associatedData(accountId: [UInt8], name: [UInt8]) -> [UInt8] {
        Array("AUTHCTL-STORE".utf8) + accountId + name
    }

    static func seal(_ entries: [(record: VaultRecord, landedAt: Instant)], name: [UInt8], key: SealingKey, accountId: [UInt8]) -> [UInt8] {
        var plain = BigEndianBytes.of(UInt32(entries.count))
        for entry in entries { plain += entry.landedAt.bytes }
        plain += VaultDecoding.encodeBatch(entries.map(\.record))
        return key.seal(plain, associatedData: associatedData(accountId: accountId, name: name))
    }

    /// The entries, or `nil` when the object does not open under this account's key (damaged, or
    /// not this account's).
    static func open(_ bytes: [UInt8], name: [UInt8], key: SealingKey, accountId: [UInt8]) -> [(record: VaultRecord, landedAt: Instant)]? {
        guard let plain = key.open(bytes, associatedData: associatedData(accountId: accountId, name: name)), plain.count >= 4 else {
            return nil
        }
        let count = Int(BigEndianBytes.integer(plain[0..<4]) as UInt32)
        guard count <= (plain.count - 4) / 16 else { return nil }
        let times = (0..<count).compactMap { Instant(bytes: plain[(4 + 16 * $0)..<(20 + 16 * $0)]) }
        guard let records = try? VaultDecoding.batch(Array(plain[(4 + 16 * count)...]), context: "a store object"),
              records.count == count
        else { return nil }
        return Array(zip(records, times)).map { (record: $0.0, landedAt: $0.1) }
    }
}
