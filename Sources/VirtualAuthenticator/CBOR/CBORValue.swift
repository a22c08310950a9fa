/// A CBOR data item (RFC 8949), restricted to what WebAuthn and CTAP2 use.
///
/// Encoding is always CTAP2 canonical (CTAP 2.1 §8 "Message Encoding"): integers in their shortest
/// form, definite lengths, and map keys sorted by their encoded bytes, shorter first, then
/// bytewise. It is written here, byte by byte, rather than through libcbor (which decoding uses):
/// a libcbor item per value and an encoding per map key for the sort cost more than the bytes.
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
        var out = [UInt8]()
        encode(into: &out)
        return out
    }

    /// Written in Swift, straight into one buffer: a head (major type and argument in its shortest
    /// form, RFC 8949 §3) before each item's content, map keys sorted by their encoding.
    private func encode(into out: inout [UInt8]) {
        switch self {
        case .unsigned(let n): Self.head(0, n, &out)
        case .negative(let n): Self.head(1, n, &out)
        case .bytes(let b):
            Self.head(2, UInt64(b.count), &out)
            out += b
        case .text(let t):
            Self.head(3, UInt64(t.utf8.count), &out)
            out += t.utf8
        case .array(let items):
            Self.head(4, UInt64(items.count), &out)
            for item in items { item.encode(into: &out) }
        case .map(let pairs):
            Self.head(5, UInt64(pairs.count), &out)
            let sorted = pairs.map { ($0.0.encoded(), $0.1) }.sorted { Self.canonicalLess($0.0, $1.0) }
            for (key, value) in sorted {
                out += key
                value.encode(into: &out)
            }
        case .bool(let b): out.append(b ? 0xF5 : 0xF4)
        case .null: out.append(0xF6)
        }
    }

    /// The initial byte and argument: values below 24 in the byte itself, then 1, 2, 4 or 8
    /// big-endian bytes, whichever is shortest.
    private static func head(_ major: UInt8, _ argument: UInt64, _ out: inout [UInt8]) {
        let type = major << 5
        let size: Int
        switch argument {
        case 0..<24:
            out.append(type | UInt8(argument))
            return
        case 24...0xFF: size = 1; out.append(type | 24)
        case 0x100...0xFFFF: size = 2; out.append(type | 25)
        case 0x1_0000...0xFFFF_FFFF: size = 4; out.append(type | 26)
        default: size = 8; out.append(type | 27)
        }
        for i in (0..<size).reversed() { out.append(UInt8(truncatingIfNeeded: argument >> (8 * UInt64(i)))) }
    }

    /// CTAP2 canonical key order: shorter encodings first, then lexicographic bytes.
    static func canonicalLess(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.count != b.count ? a.count < b.count : a.lexicographicallyPrecedes(b)
    }
}
