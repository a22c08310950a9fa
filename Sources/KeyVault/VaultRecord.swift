/// One record in the vault: a stable 16-byte id, a kind, a version that grows with every change
/// of the same id, and typed fields. Devices that sync will merge records by (id, version);
/// deletions are tombstones so they can travel too.
public struct VaultRecord: Equatable, Sendable {
    public struct Kind: RawRepresentable, Equatable, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let tombstone = Kind(rawValue: 0)
        public static let credential = Kind(rawValue: 1)
        public static let settings = Kind(rawValue: 2)
    }

    public var id: [UInt8]
    public var kind: Kind
    public var version: UInt64
    /// Tag → value. Tags are the record kind's own vocabulary (see docs/vault-format.md).
    public var fields: [UInt8: [UInt8]]

    public init(id: [UInt8], kind: Kind, version: UInt64 = 1, fields: [UInt8: [UInt8]] = [:]) {
        precondition(id.count == 16, "record ids are 16 bytes")
        self.id = id
        self.kind = kind
        self.version = version
        self.fields = fields
    }

    public static func newId() -> [UInt8] { Sodium.randomBytes(16) }

    /// id (16) ‖ kind u8 ‖ version u64 ‖ fieldCount u16 ‖ fieldCount × (tag u8 ‖ length u32 ‖ value),
    /// fields in ascending tag order so the encoding is deterministic.
    var bytes: [UInt8] {
        var w = ByteWriter()
        w.append(id)
        w.append(kind.rawValue)
        w.append(version)
        w.append(UInt16(fields.count))
        for (tag, value) in fields.sorted(by: { $0.key < $1.key }) {
            w.append(tag)
            w.append(UInt32(value.count))
            w.append(value)
        }
        return w.bytes
    }

    init(reading r: inout ByteReader) throws(VaultError) {
        id = try r.take(16)
        kind = Kind(rawValue: try r.read(UInt8.self))
        version = try r.read(UInt64.self)
        let count = try r.read(UInt16.self)
        fields = [:]
        for _ in 0..<count {
            let tag = try r.read(UInt8.self)
            let length = try r.read(UInt32.self)
            guard fields[tag] == nil else { throw VaultError(.corrupted, "\(r.context) repeats field \(tag)") }
            fields[tag] = try r.take(Int(length))
        }
    }
}
