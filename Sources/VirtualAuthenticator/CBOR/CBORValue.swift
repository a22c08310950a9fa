import CCBOR

/// A CBOR data item (RFC 8949), restricted to what WebAuthn and CTAP2 use.
///
/// Encoding goes through libcbor's encoders and is always CTAP2 canonical (CTAP 2.1 §8 "Message
/// Encoding"): integers in their shortest form, definite lengths, and map keys sorted by their
/// encoded bytes, shorter first, then bytewise. libcbor does not sort maps, so ``encoded()`` does.
package indirect enum CBORValue: Equatable, Sendable {
    case unsigned(UInt64)
    case negative(UInt64)  // the value is -1 - n
    case bytes([UInt8])
    case text(String)
    case array([CBORValue])
    case map([(CBORValue, CBORValue)])
    case bool(Bool)
    case null

    package static func int(_ value: Int) -> CBORValue {
        value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-1 - value))
    }

    package static func == (lhs: CBORValue, rhs: CBORValue) -> Bool {
        lhs.encoded() == rhs.encoded()
    }

    /// The integer value, if this is an integer that fits an `Int`.
    package var intValue: Int? {
        switch self {
        case .unsigned(let n): n <= UInt64(Int.max) ? Int(n) : nil
        case .negative(let n): n <= UInt64(Int.max) ? -1 - Int(n) : nil
        default: nil
        }
    }

    package var bytesValue: [UInt8]? { if case .bytes(let b) = self { b } else { nil } }
    package var textValue: String? { if case .text(let t) = self { t } else { nil } }
    package var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }

    /// Looks a key up in a map; `nil` if this is not a map or the key is absent.
    package subscript(key: CBORValue) -> CBORValue? {
        guard case .map(let pairs) = self else { return nil }
        return pairs.first { $0.0 == key }?.1
    }

    /// CTAP2 canonical encoding, written by libcbor's encoders (`cbor_encode_*`, each writing one
    /// head in its shortest form) straight into one buffer: no item tree is built and freed.
    package func encoded() -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(128)
        encode(into: &out)
        return out
    }

    private func encode(into out: inout [UInt8]) {
        switch self {
        case .unsigned(let n): Self.head(&out) { cbor_encode_uint(n, $0, $1) }
        case .negative(let n): Self.head(&out) { cbor_encode_negint(n, $0, $1) }
        case .bytes(let b):
            Self.head(&out) { cbor_encode_bytestring_start(b.count, $0, $1) }
            out += b
        case .text(let t):
            let utf8 = t.utf8
            Self.head(&out) { cbor_encode_string_start(utf8.count, $0, $1) }
            out += utf8
        case .array(let items):
            Self.head(&out) { cbor_encode_array_start(items.count, $0, $1) }
            for item in items { item.encode(into: &out) }
        case .map(let pairs):
            Self.head(&out) { cbor_encode_map_start(pairs.count, $0, $1) }
            // libcbor writes what it is given in order; the canonical order is ours to make.
            let keyed = pairs.map { ($0.0.encoded(), $0.1) }.sorted { Self.canonicalLess($0.0, $1.0) }
            for (key, value) in keyed {
                out += key
                value.encode(into: &out)
            }
        case .bool(let b): Self.head(&out) { cbor_encode_bool(b, $0, $1) }
        case .null: Self.head(&out) { cbor_encode_null($0, $1) }
        }
    }

    /// Appends what one libcbor encoder writes: a head (or a simple value), at most 9 bytes.
    private static func head(_ out: inout [UInt8], _ write: (UnsafeMutablePointer<UInt8>, Int) -> Int) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 9) { buffer in
            let written = write(buffer.baseAddress!, 9)
            precondition(written > 0, "libcbor could not encode a head")
            out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[0..<written]))
        }
    }

    /// CTAP2 canonical key order: shorter encodings first, then lexicographic bytes.
    static func canonicalLess(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.count != b.count ? a.count < b.count : a.lexicographicallyPrecedes(b)
    }
}
