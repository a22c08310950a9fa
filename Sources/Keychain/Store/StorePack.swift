@_spi(ByteOrder) import ByteOrder
import KeyVault

/// An object of the account store: the revisions one upload carried (or one part of a snapshot),
/// each with the moment it landed, sealed under the account key — the store sees only ciphertext
/// and the object's name.
///
///     name: 16 random bytes
///     nonce (24) ‖ XChaCha20-Poly1305(account key, AD "AUTHCTL-STORE" ‖ account id ‖ name bytes) of:
///         FF FF FF FF ‖ kind u8 (1: an upload, 2: a snapshot part) ‖ an upload's link (64, ``UploadLink``) ‖
///         count u32 ‖ count × landedAt (ms u64 ‖ order u64) ‖ a vault batch of the `count` revision records
///
/// An object authctl 0.3 or earlier wrote starts with the count (no marker, no kind, no link): it is
/// read, as an upload that names no place in its vault's chain.
///
/// Inside each record, the private key (tag 10) is sealed under the account key too (AD
/// "AUTHCTL-ITEM" ‖ account id ‖ revision id), around the biometry-key seal a passkey made with user
/// verification also has.
enum StorePack {
    /// What an object held.
    struct Opened {
        let entries: [(record: VaultRecord, landedAt: Instant)]
        /// An upload's place in its vault's chain; `nil` for a snapshot part, or an object of an
        /// authctl 0.3 or earlier.
        let link: UploadLink?
        let isSnapshotPart: Bool
    }

    private static let marker: [UInt8] = [0xff, 0xff, 0xff, 0xff]
    private static let upload: UInt8 = 1, snapshotPart: UInt8 = 2

    static func itemAssociatedData(accountId: [UInt8], revisionId: [UInt8]) -> [UInt8] {
        Array("AUTHCTL-ITEM".utf8) + accountId + revisionId
    }

    private static func associatedData(accountId: [UInt8], name: [UInt8]) -> [UInt8] {
        Array("AUTHCTL-STORE".utf8) + accountId + name
    }

    /// An upload at `link` in its vault's chain, or (`link` nil) a snapshot part.
    static func seal(_ entries: [(record: VaultRecord, landedAt: Instant)], link: UploadLink?, name: [UInt8], key: SealingKey,
                     accountId: [UInt8]) -> [UInt8] {
        var plain = marker + [link == nil ? snapshotPart : upload] + (link?.bytes ?? [])
        plain += BigEndianBytes.of(UInt32(entries.count))
        for entry in entries { plain += entry.landedAt.bytes }
        plain += VaultDecoding.encodeBatch(entries.map(\.record))
        return key.seal(plain, associatedData: associatedData(accountId: accountId, name: name))
    }

    /// What the object holds, or `nil` when it does not open under this account's key (damaged, or
    /// not this account's) or does not decode.
    static func open(_ bytes: [UInt8], name: [UInt8], key: SealingKey, accountId: [UInt8]) -> Opened? {
        guard let plain = key.open(bytes, associatedData: associatedData(accountId: accountId, name: name)), plain.count >= 4 else {
            return nil
        }
        var start = 0, link: UploadLink?, part = false
        if Array(plain[0..<4]) == marker {
            guard plain.count >= 5 else { return nil }
            switch plain[4] {
            case upload:
                guard plain.count >= 5 + UploadLink.size, let read = UploadLink(bytes: plain[5..<(5 + UploadLink.size)]) else { return nil }
                link = read
                start = 5 + UploadLink.size
            case snapshotPart:
                part = true
                start = 5
            default: return nil
            }
        }
        guard plain.count - start >= 4 else { return nil }
        let count = Int(BigEndianBytes.integer(plain[start..<(start + 4)]) as UInt32)
        let body = start + 4
        guard count <= (plain.count - body) / 16 else { return nil }
        let times = (0..<count).compactMap { Instant(bytes: plain[(body + 16 * $0)..<(body + 16 + 16 * $0)]) }
        guard let records = try? VaultDecoding.batch(Array(plain[(body + 16 * count)...]), context: "a store object"),
              records.count == count
        else { return nil }
        return Opened(entries: Array(zip(records, times)).map { (record: $0.0, landedAt: $0.1) }, link: link, isSnapshotPart: part)
    }
}
