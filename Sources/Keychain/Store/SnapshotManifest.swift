@_spi(ByteOrder) import ByteOrder
import KeyVault
import SyncStore

/// What a snapshot is, sealed as one of its parts: the store sequence it replaces the log up to,
/// how far it reaches in each vault's chain of uploads, and the name and digest of every other
/// part — so a part the store drops, alters or adds is seen by the first device that reads it
/// (docs/sync.md, "What the devices check"):
///
///     name: "M" ‖ 16 random bytes (17 bytes, a length no other object of the store has)
///     nonce (24) ‖ XChaCha20-Poly1305(account key, AD "AUTHCTL-SNAPSHOT" ‖ account id ‖ name) of:
///         format u8 (1) ‖ through u64 ‖ heads u32 ‖ heads × (vault (16) ‖ index u64 ‖ digest (32)) ‖
///         parts u32 ‖ parts × (name length u8 ‖ name ‖ digest (32))
struct SnapshotManifest: Equatable {
    let through: UInt64
    let heads: [[UInt8]: ChainPosition]
    let parts: [Part]

    struct Part: Equatable {
        let name: [UInt8]
        let digest: [UInt8]
    }

    private static let format: UInt8 = 1

    static func isManifest(_ name: [UInt8]) -> Bool { name.count == 17 && name.first == 0x4d }

    private static func associatedData(accountId: [UInt8], name: [UInt8]) -> [UInt8] {
        Array("AUTHCTL-SNAPSHOT".utf8) + accountId + name
    }

    /// The manifest of `parts`, sealed as a store object of its own (under a new random name).
    static func sealed(through: UInt64, heads: [[UInt8]: ChainPosition], parts: [StoreObject], key: SealingKey, accountId: [UInt8]) -> StoreObject {
        var plain = [format] + BigEndianBytes.of(through) + BigEndianBytes.of(UInt32(heads.count))
        for (vault, head) in heads.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) { plain += vault + head.bytes }
        plain += BigEndianBytes.of(UInt32(parts.count))
        for part in parts { plain += [UInt8(part.id.count)] + part.id + ChainPosition.digest(of: part) }
        let name = [0x4d] + RandomSource.live.bytes(16)
        return StoreObject(id: name, bytes: key.seal(plain, associatedData: associatedData(accountId: accountId, name: name)))
    }

    /// `nil` when `object` is no manifest of this account's (it does not open, or does not decode).
    static func open(_ object: StoreObject, key: SealingKey, accountId: [UInt8]) -> SnapshotManifest? {
        guard isManifest(object.id),
              let plain = key.open(object.bytes, associatedData: associatedData(accountId: accountId, name: object.id))
        else { return nil }
        var reader = FieldReader(plain)
        guard reader.take(1) == [format], let through = reader.take(8), let headCount = reader.take(4) else { return nil }
        var heads = [[UInt8]: ChainPosition]()
        for _ in 0..<(BigEndianBytes.integer(headCount) as UInt32) {
            guard let vault = reader.take(16), let head = reader.take(40).flatMap({ ChainPosition(bytes: $0) }) else { return nil }
            heads[vault] = head
        }
        guard let partCount = reader.take(4) else { return nil }
        var parts = [Part]()
        for _ in 0..<(BigEndianBytes.integer(partCount) as UInt32) {
            guard let length = reader.take(1), let name = reader.take(Int(length[0])), let digest = reader.take(32) else { return nil }
            parts.append(Part(name: name, digest: digest))
        }
        guard reader.atEnd else { return nil }
        return SnapshotManifest(through: BigEndianBytes.integer(through), heads: heads, parts: parts)
    }

    /// A snapshot as the store gave it, checked against its manifest: the parts to read (those it
    /// lists, as listed), and what is wrong — a part missing, altered or not listed, a manifest
    /// of another snapshot, or more than one. Without a manifest (a snapshot an authctl of 0.3 or
    /// earlier made, or one whose manifest the store dropped) every part is read, unchecked: the
    /// caller decides what that means.
    static func check(_ snapshot: StoreSnapshot, key: SealingKey, accountId: [UInt8]) -> (manifest: SnapshotManifest?, parts: [StoreObject], problems: [String]) {
        let manifests = snapshot.parts.compactMap { open($0, key: key, accountId: accountId) }
        let label = "the snapshot up to change \(snapshot.sequence)"
        guard let manifest = manifests.first(where: { $0.through == snapshot.sequence }) ?? manifests.first else {
            return (nil, snapshot.parts.filter { !isManifest($0.id) }, [])
        }
        var problems = [String]()
        if manifests.count > 1 { problems.append("\(label) holds \(manifests.count) lists of its parts") }
        if manifest.through != snapshot.sequence {
            problems.append("\(label) holds the list of the snapshot up to change \(manifest.through) (an older snapshot given again?)")
        }
        let byName = Dictionary(snapshot.parts.filter { !isManifest($0.id) }.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        var parts = [StoreObject]()
        var missing = 0, altered = 0
        for part in manifest.parts {
            guard let object = byName[part.name] else { missing += 1; continue }
            guard ChainPosition.digest(of: object) == part.digest else { altered += 1; continue }
            parts.append(object)
        }
        let listed = Set(manifest.parts.map(\.name))
        let extra = byName.keys.filter { !listed.contains($0) }.count + snapshot.parts.filter { isManifest($0.id) }.count - 1
        if missing > 0 { problems.append("\(label) lacks \(missing) of the \(manifest.parts.count) parts it lists") }
        if altered > 0 { problems.append("\(label) holds \(altered) part(s) that are not the ones it lists (altered)") }
        if extra > 0 { problems.append("\(label) holds \(extra) part(s) it does not list, passed over") }
        return (manifest, parts, problems)
    }
}
