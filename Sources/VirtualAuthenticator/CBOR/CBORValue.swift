import CCBOR

/// A CBOR data item (RFC 8949), restricted to what WebAuthn and CTAP2 use.
///
/// Encoding goes through libcbor and is always CTAP2 canonical (CTAP 2.1 §8 "Message Encoding"):
/// integers in their shortest form, definite lengths, and map keys sorted by their encoded bytes,
/// shorter first, then bytewise. libcbor does not sort maps, so ``encoded()`` does.
public indirect enum CBORValue: Equatable, Sendable {
    case unsigned(UInt64)
    case negative(UInt64)  // the value is -1 - n
    case bytes([UInt8])
    case text(String)
    case array([CBORValue])
    case map([(CBORValue, CBORValue)])
    case bool(Bool)
    case null

    public static func int(_ value: Int) -> CBORValue {
        value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-1 - value))
    }

    public static func == (lhs: CBORValue, rhs: CBORValue) -> Bool {
        lhs.encoded() == rhs.encoded()
    }

    /// The integer value, if this is an integer that fits an `Int`.
    public var intValue: Int? {
        switch self {
        case .unsigned(let n): n <= UInt64(Int.max) ? Int(n) : nil
        case .negative(let n): n <= UInt64(Int.max) ? -1 - Int(n) : nil
        default: nil
        }
    }

    public var bytesValue: [UInt8]? { if case .bytes(let b) = self { b } else { nil } }
    public var textValue: String? { if case .text(let t) = self { t } else { nil } }
    public var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }

    /// Looks a key up in a map; `nil` if this is not a map or the key is absent.
    public subscript(key: CBORValue) -> CBORValue? {
        guard case .map(let pairs) = self else { return nil }
        return pairs.first { $0.0 == key }?.1
    }

    /// CTAP2 canonical encoding.
    public func encoded() -> [UInt8] {
        let item = makeItem()
        defer { var i: UnsafeMutablePointer<cbor_item_t>? = item; cbor_decref(&i) }
        var buffer: UnsafeMutablePointer<UInt8>? = nil
        var capacity = 0
        let length = cbor_serialize_alloc(item, &buffer, &capacity)
        defer { authctl_cbor_free_buffer(buffer) }
        precondition(length > 0 && buffer != nil, "libcbor could not serialize an item")
        return Array(UnsafeBufferPointer(start: buffer, count: length))
    }

    private func makeItem() -> UnsafeMutablePointer<cbor_item_t> {
        func checked(_ p: UnsafeMutablePointer<cbor_item_t>?) -> UnsafeMutablePointer<cbor_item_t> {
            guard let p else { fatalError("libcbor allocation failed") }
            return p
        }
        switch self {
        case .unsigned(let n): return checked(Self.buildUnsigned(n, negative: false))
        case .negative(let n): return checked(Self.buildUnsigned(n, negative: true))
        case .bytes(let b):
            return checked(b.withUnsafeBufferPointer { cbor_build_bytestring($0.baseAddress, $0.count) })
        case .text(let t):
            let utf8 = Array(t.utf8)
            return checked(utf8.withUnsafeBufferPointer { p in
                p.withMemoryRebound(to: CChar.self) { cbor_build_stringn($0.baseAddress, $0.count) }
            })
        case .array(let items):
            let array = checked(cbor_new_definite_array(items.count))
            for element in items {
                let child = element.makeItem()
                precondition(cbor_array_push(array, child))
                var c: UnsafeMutablePointer<cbor_item_t>? = child
                cbor_decref(&c)
            }
            return array
        case .map(let pairs):
            let map = checked(cbor_new_definite_map(pairs.count))
            let sorted = pairs.map { ($0.0.encoded(), $0.0, $0.1) }.sorted { Self.canonicalLess($0.0, $1.0) }
            for (_, key, value) in sorted {
                let k = key.makeItem()
                let v = value.makeItem()
                precondition(cbor_map_add(map, cbor_pair(key: k, value: v)))
                var kk: UnsafeMutablePointer<cbor_item_t>? = k
                var vv: UnsafeMutablePointer<cbor_item_t>? = v
                cbor_decref(&kk)
                cbor_decref(&vv)
            }
            return map
        case .bool(let b): return checked(cbor_build_bool(b))
        case .null: return checked(cbor_new_null())
        }
    }

    private static func buildUnsigned(_ n: UInt64, negative: Bool) -> UnsafeMutablePointer<cbor_item_t>? {
        let item: UnsafeMutablePointer<cbor_item_t>?
        switch n {
        case 0...0xFF: item = cbor_build_uint8(UInt8(n))
        case 0...0xFFFF: item = cbor_build_uint16(UInt16(n))
        case 0...0xFFFF_FFFF: item = cbor_build_uint32(UInt32(n))
        default: item = cbor_build_uint64(n)
        }
        if negative, let item { cbor_mark_negint(item) }
        return item
    }

    /// CTAP2 canonical key order: shorter encodings first, then lexicographic bytes.
    static func canonicalLess(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.count != b.count ? a.count < b.count : a.lexicographicallyPrecedes(b)
    }
}
