import KeyVault
@testable import Keychain
import Testing

/// A replica record (StoreReplica.swift) is made from the downloaded revision's encoded fields, not
/// through a dictionary of them: it must hold exactly what the dictionary way held — the store's
/// fields, the revision's id (40), when it landed (41), the private key moved from tag 10 to 43 —
/// and give back the revision as the store had it.
struct StoreReplicaTests {
    /// A revision as the store gives it: read from its encoding, its fields still encoded.
    static func asDownloaded(_ fields: [UInt8: [UInt8]], id: UInt8) throws -> VaultRecord {
        let record = VaultRecord(id: [UInt8](repeating: id, count: 16), kind: .credential, version: 4, fields: fields)
        let read = try VaultDecoding.batch(VaultDecoding.encodeBatch([record]))
        return try #require(read.first)
    }

    @Test(arguments: [true, false])
    func replicaHoldsTheRevisionAndGivesItBack(withKey: Bool) throws {
        var fields: [UInt8: [UInt8]] = [
            CredentialRecord.Tag.rpId: Array("example.com".utf8),
            CredentialRecord.Tag.userHandle: [1, 2, 3, 4],
            CredentialRecord.Tag.publicKey: [UInt8](repeating: 9, count: 65),
            200: [0xee],  // a tag past every one the replica adds
        ]
        if withKey { fields[CredentialRecord.Tag.sealedPrivateKey] = [UInt8](repeating: 0x42, count: 72) }
        let revision = try Self.asDownloaded(fields, id: 0x31)
        let landed = Instant(ms: 1_800_000_000_123, order: 5)
        let replica = StoreReplica.record(of: revision, landedAt: landed)

        var want = fields
        want[StoreReplica.Tag.revisionId] = revision.id
        want[StoreReplica.Tag.landedAt] = landed.bytes
        want[StoreReplica.Tag.storeSealedKey] = want.removeValue(forKey: CredentialRecord.Tag.sealedPrivateKey)
        #expect(replica.id == StoreReplica.recordId(of: revision.id))
        #expect(replica.kind == .credential)
        #expect(replica.version == 1)
        #expect(replica.fields == want)
        #expect(replica.field(CredentialRecord.Tag.sealedPrivateKey) == nil, "the store-sealed key left in tag 10")
        #expect(replica == VaultRecord(id: StoreReplica.recordId(of: revision.id), kind: .credential, version: 1, fields: want))
        // The commit writes what it encodes: it must read back as the same record.
        let written = try VaultDecoding.batch(VaultDecoding.encodeBatch([replica]))
        #expect(written == [replica])

        for kept in [replica, written[0]] {
            // The revision as the store had it, at the replica's version (as it always was).
            let back = try #require(StoreReplica.revisionRecord(kept))
            #expect(back.record == VaultRecord(id: revision.id, kind: .credential, version: kept.version, fields: fields))
            #expect(back.record.fields == fields)
            #expect(back.landedAt == landed)
        }
        #expect(StoreReplica.revisionRecord(revision) == nil, "a revision read as a replica")
    }
}
