@_spi(ByteOrder) import ByteOrder

/// One record in the vault: a stable 16-byte id, a kind, a version that grows with every change
/// of the same id, and typed fields. Devices that sync will merge records by (id, version);
/// deletions are tombstones so they can travel too.
package struct VaultRecord: Equatable, Sendable {
    package struct Kind: RawRepresentable, Equatable, Hashable, Sendable, CustomStringConvertible {
        package let rawValue: UInt8
        package init(rawValue: UInt8) { self.rawValue = rawValue }
        package var description: String {
            switch self {
            case .tombstone: "tombstone"
            case .credential: "credential"
            case .settings: "settings"
            case .device: "device"
            default: "kind-\(rawValue)"
            }
        }
        package static let tombstone = Kind(rawValue: 0)
        package static let credential = Kind(rawValue: 1)
        package static let settings = Kind(rawValue: 2)
        package static let device = Kind(rawValue: 3)
    }

    package var id: [UInt8]
    package var kind: Kind
    package var version: UInt64
    /// The fields' encoding as read from the log, parsed only when asked for: opening a vault of
    /// many records then costs a scan of each, not a dictionary per record.
    private var encodedFields: ArraySlice<UInt8>?
    private var parsedFields: [UInt8: [UInt8]]

    /// Tag → value. Tags are the record kind's own vocabulary (see docs/vault-format.md).
    package var fields: [UInt8: [UInt8]] {
        get { encodedFields.map(Self.parseFields) ?? parsedFields }
        set { parsedFields = newValue; encodedFields = nil }
    }

    package init(id: [UInt8], kind: Kind, version: UInt64 = 1, fields: [UInt8: [UInt8]] = [:]) {
        precondition(id.count == 16, "record ids are 16 bytes")
        self.id = id
        self.kind = kind
        self.version = version
        self.parsedFields = fields
        self.encodedFields = nil
    }

    package static func newId() -> [UInt8] { Sodium.randomBytes(16) }

    package static func == (a: VaultRecord, b: VaultRecord) -> Bool {
        a.id == b.id && a.kind == b.kind && a.version == b.version && a.fields == b.fields
    }

    /// One field's value, without parsing the others: a scan of the fields' headers in place (the
    /// encoding's layout was checked when it was read or written), no slice made until it is found.
    package func field(_ tag: UInt8) -> ArraySlice<UInt8>? {
        guard let encoded = encodedFields else { return parsedFields[tag].map { $0[...] } }
        let found = encoded.withUnsafeBufferPointer { b -> (start: Int, end: Int)? in
            var offset = 2
            while offset + 5 <= b.count {
                let length = Int(b[offset + 1]) << 24 | Int(b[offset + 2]) << 16 | Int(b[offset + 3]) << 8 | Int(b[offset + 4])
                if b[offset] == tag { return (offset + 5, offset + 5 + length) }
                offset += 5 + length
            }
            return nil
        }
        guard let found else { return nil }
        return encoded[(encoded.startIndex + found.start)..<(encoded.startIndex + found.end)]
    }

    /// Every field's place, from one scan of the encoding: for a reader that asks one record for
    /// most of its fields (decoding a revision: some thirty), where ``field(_:)`` would scan the
    /// fields once for each.
    package var fieldTable: FieldTable { FieldTable(self) }

    /// The fields of one record by tag, found by one scan: which tags are present (a 256-bit set)
    /// and where each value starts, in tag order, so a lookup is a count of the tags below it.
    package struct FieldTable {
        private let encoded: ArraySlice<UInt8>?
        private let parsed: [UInt8: [UInt8]]
        private var present: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        /// Where each present field's value starts and ends (offsets into `encoded`), in tag order.
        private var bounds: [(start: Int, end: Int)] = []

        init(_ record: VaultRecord) {
            encoded = record.encodedFields
            parsed = record.parsedFields
            guard let encoded else { return }
            var present = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
            var bounds = [(start: Int, end: Int)]()
            encoded.withUnsafeBufferPointer { b in
                guard b.count >= 2 else { return }
                bounds.reserveCapacity(Int(b[0]) << 8 | Int(b[1]))
                var offset = 2
                while offset + 5 <= b.count {
                    let tag = b[offset]
                    let length = Int(b[offset + 1]) << 24 | Int(b[offset + 2]) << 16 | Int(b[offset + 3]) << 8 | Int(b[offset + 4])
                    let bit = UInt64(1) << (tag & 63)
                    switch tag >> 6 {
                    case 0: present.0 |= bit
                    case 1: present.1 |= bit
                    case 2: present.2 |= bit
                    default: present.3 |= bit
                    }
                    bounds.append((offset + 5, offset + 5 + length))
                    offset += 5 + length
                }
            }
            self.present = present
            self.bounds = bounds
        }

        /// Field `tag`'s value, as ``VaultRecord/field(_:)`` gives it.
        package func field(_ tag: UInt8) -> ArraySlice<UInt8>? {
            guard let encoded else { return parsed[tag].map { $0[...] } }
            let bit = UInt64(1) << (tag & 63), below = bit - 1
            let index: Int
            switch tag >> 6 {
            case 0:
                guard present.0 & bit != 0 else { return nil }
                index = (present.0 & below).nonzeroBitCount
            case 1:
                guard present.1 & bit != 0 else { return nil }
                index = present.0.nonzeroBitCount + (present.1 & below).nonzeroBitCount
            case 2:
                guard present.2 & bit != 0 else { return nil }
                index = present.0.nonzeroBitCount + present.1.nonzeroBitCount + (present.2 & below).nonzeroBitCount
            default:
                guard present.3 & bit != 0 else { return nil }
                index = present.0.nonzeroBitCount + present.1.nonzeroBitCount + present.2.nonzeroBitCount + (present.3 & below).nonzeroBitCount
            }
            let (start, end) = bounds[index]
            return encoded[(encoded.startIndex + start)..<(encoded.startIndex + end)]
        }
    }

    /// Field `tag` as a big-endian integer of `T`'s width; `nil` when the record lacks it.
    package func integer<T: FixedWidthInteger>(_ tag: UInt8, as _: T.Type) throws(VaultError) -> T? {
        guard let bytes = field(tag) else { return nil }
        guard bytes.count == MemoryLayout<T>.size else {
            throw VaultError(.corrupted, "field \(tag) of a \(kind) record is \(bytes.count) bytes, not \(MemoryLayout<T>.size)")
        }
        return BigEndianBytes.integer(bytes)
    }

    // The widths records use, spelled out: a call from another module then runs code compiled
    // for the type rather than the generic version above (which every revision read goes through).

    package func integer(_ tag: UInt8, as _: UInt64.Type) throws(VaultError) -> UInt64? { try fixedWidth(tag) }
    package func integer(_ tag: UInt8, as _: UInt32.Type) throws(VaultError) -> UInt32? { try fixedWidth(tag) }
    package func integer(_ tag: UInt8, as _: Int32.Type) throws(VaultError) -> Int32? { try fixedWidth(tag) }

    private func fixedWidth<T: FixedWidthInteger>(_ tag: UInt8) throws(VaultError) -> T? {
        guard let bytes = field(tag) else { return nil }
        guard bytes.count == MemoryLayout<T>.size else {
            throw VaultError(.corrupted, "field \(tag) of a \(kind) record is \(bytes.count) bytes, not \(MemoryLayout<T>.size)")
        }
        return BigEndianBytes.integer(bytes)
    }

    /// This record's fields with `changes` applied (each tag at most once; a `nil` value removes
    /// the field), as a record of `id`, `kind` and `version`. A record read from the log is
    /// rewritten straight from its fields' encoding, once, in ascending tag order — no dictionary
    /// of its fields on the way, and the result writes itself by copying that encoding (a first
    /// sync makes a replica record of each of 100,000 downloaded revisions this way).
    package func rewritten(id: [UInt8], kind: Kind, version: UInt64,
                           changing changes: [(tag: UInt8, value: ArraySlice<UInt8>?)]) -> VaultRecord {
        guard let encoded = encodedFields else {
            var all = parsedFields
            for (tag, value) in changes { all[tag] = value.map(Array.init) }
            return VaultRecord(id: id, kind: kind, version: version, fields: all)
        }
        let sorted = changes.sorted { $0.tag < $1.tag }
        for i in sorted.indices.dropFirst() { precondition(sorted[i].tag != sorted[i - 1].tag, "a field changed twice") }
        // The count first: what stays, less what is replaced or removed, plus what is set.
        var count = Int(BigEndianBytes.integer(encoded[encoded.startIndex..<(encoded.startIndex + 2)]) as UInt16)
        var extra = 0
        for change in sorted {
            if field(change.tag) != nil { count -= 1 }
            if let value = change.value {
                count += 1
                extra += 5 + value.count
            }
        }
        var w = ByteWriter(capacity: encoded.count + extra)
        w.append(UInt16(count))
        func put(_ tag: UInt8, _ value: ArraySlice<UInt8>) {
            w.append(tag)
            w.append(UInt32(value.count))
            w.append(value)
        }
        // The fields that stay are copied a run at a time (header and value as they are), not
        // one by one: a replica changes four fields of some twenty.
        var next = 0
        var offset = encoded.startIndex + 2
        var run = offset  // where the fields not copied yet start
        while offset < encoded.endIndex {
            let tag = encoded[offset], length = Self.uint32(encoded, at: offset + 1)
            if next < sorted.count, sorted[next].tag <= tag {
                w.append(encoded[run..<offset])
                while next < sorted.count, sorted[next].tag < tag {
                    if let value = sorted[next].value { put(sorted[next].tag, value) }
                    next += 1
                }
                run = offset
                if next < sorted.count, sorted[next].tag == tag {
                    if let value = sorted[next].value { put(tag, value) }
                    next += 1
                    run = offset + 5 + length
                }
            }
            offset += 5 + length
        }
        w.append(encoded[run..<offset])
        for change in sorted[next...] {
            if let value = change.value { put(change.tag, value) }
        }
        var out = VaultRecord(id: id, kind: kind, version: version)
        out.encodedFields = w.bytes[...]
        return out
    }

    /// Sets field `tag` to `value`; `nil` removes it.
    package mutating func setField(_ tag: UInt8, _ value: [UInt8]?) {
        var all = fields
        all[tag] = value
        fields = all
    }

    /// Sets field `tag` to `value`, big-endian; `nil` removes it.
    package mutating func setInteger<T: FixedWidthInteger>(_ tag: UInt8, _ value: T?) {
        setField(tag, value.map { BigEndianBytes.of($0) })
    }

    /// The length of ``bytes``, without encoding them.
    var encodedLength: Int {
        id.count + 1 + 8 + (encodedFields?.count ?? parsedFields.values.reduce(2) { $0 + 5 + $1.count })
    }

    /// id (16) ‖ kind u8 ‖ version u64 ‖ fieldCount u16 ‖ fieldCount × (tag u8 ‖ length u32 ‖ value),
    /// fields in ascending tag order so the encoding is deterministic.
    var bytes: [UInt8] {
        var w = ByteWriter(capacity: encodedLength)
        write(to: &w)
        return w.bytes
    }

    /// Appends ``bytes`` to `w`, with no array of its own on the way (a frame of many records).
    func write(to w: inout ByteWriter) {
        w.append(id)
        w.append(kind.rawValue)
        w.append(version)
        if let encodedFields { w.append(encodedFields); return }
        w.append(UInt16(parsedFields.count))
        for (tag, value) in parsedFields.sorted(by: { $0.key < $1.key }) {
            w.append(tag)
            w.append(UInt32(value.count))
            w.append(value)
        }
    }

    /// Reads one record, checking the field layout (lengths in bounds, ascending tags) without
    /// copying the values.
    init(reading r: inout ByteReader) throws(VaultError) {
        id = try r.take(16)
        kind = Kind(rawValue: try r.read(UInt8.self))
        version = try r.read(UInt64.self)
        let start = r.offset
        let count = try r.read(UInt16.self)
        var previous = -1
        for _ in 0..<count {
            let tag = Int(try r.read(UInt8.self))
            guard tag > previous else { throw VaultError(.corrupted, "\(r.context) has field \(tag) out of order or repeated") }
            previous = tag
            try r.skip(Int(try r.read(UInt32.self)))
        }
        encodedFields = r.slice(from: start)
        parsedFields = [:]
    }

    private static func parseFields(_ encoded: ArraySlice<UInt8>) -> [UInt8: [UInt8]] {
        var out = [UInt8: [UInt8]]()
        var offset = encoded.startIndex + 2
        while offset < encoded.endIndex {
            let length = uint32(encoded, at: offset + 1)
            out[encoded[offset]] = Array(encoded[(offset + 5)..<(offset + 5 + length)])
            offset += 5 + length
        }
        return out
    }

    private static func uint32(_ bytes: ArraySlice<UInt8>, at offset: Int) -> Int {
        Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
    }
}
