import KeyVault

/// A revision another vault's device uploaded, kept in this vault as it was downloaded: a
/// credential record (so it sits in its RP's partition, and a ceremony reads it with the RP's
/// other revisions) whose id is derived from the revision's, holding the store's record with two
/// more fields — the revision's own id (tag 40) and when it landed in the store (tag 41). Its
/// private key stays sealed under the account key, in tag 43 rather than 10. See docs/vault-format.md.
enum StoreReplica {
    enum Tag {
        static let revisionId: UInt8 = 40, landedAt: UInt8 = 41
        /// The private key as the store had it, sealed under the account key: kept out of tag 10,
        /// which holds keys sealed under the vault key (and which a key rotation seals again).
        static let storeSealedKey: UInt8 = 43
    }

    /// The vault id of the replica of revision `id`.
    static func recordId(of id: [UInt8]) -> [UInt8] { id.map { $0 ^ 0xa5 } }

    /// Made from the revision's encoded fields (``VaultRecord/rewritten(id:kind:version:changing:)``),
    /// not through a dictionary of them: a first sync makes one for each revision it downloads.
    static func record(of revision: VaultRecord, landedAt: Instant) -> VaultRecord {
        revision.rewritten(id: recordId(of: revision.id), kind: .credential, version: 1, changing: [
            (CredentialRecord.Tag.sealedPrivateKey, nil),
            (Tag.revisionId, revision.id[...]),
            (Tag.landedAt, landedAt.bytes[...]),
            (Tag.storeSealedKey, revision.field(CredentialRecord.Tag.sealedPrivateKey)),
        ])
    }

    /// The revision a replica record holds, as the store had it, and when it landed; `nil` for a
    /// record that is no replica.
    static func revisionRecord(_ record: VaultRecord) -> (record: VaultRecord, landedAt: Instant)? {
        guard let id = record.field(Tag.revisionId), let landed = record.field(Tag.landedAt).flatMap({ Instant(bytes: $0) }) else { return nil }
        let revision = record.rewritten(id: Array(id), kind: .credential, version: record.version, changing: [
            (CredentialRecord.Tag.sealedPrivateKey, record.field(Tag.storeSealedKey)),
            (Tag.revisionId, nil),
            (Tag.landedAt, nil),
            (Tag.storeSealedKey, nil),
        ])
        return (revision, landed)
    }
}
