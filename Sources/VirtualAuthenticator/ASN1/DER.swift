@_spi(ByteOrder) import ByteOrder

/// DER (ITU-T X.690) encoding of the few ASN.1 types that attestation certificates, their
/// extensions and Android's KeyDescription are made of. Each function returns one complete
/// TLV; constructed types take their members already encoded.
package enum DER {
    // Universal tags (X.680 §8.4).
    package static let booleanTag: UInt8 = 0x01, integerTag: UInt8 = 0x02, bitStringTag: UInt8 = 0x03
    package static let octetStringTag: UInt8 = 0x04, nullTag: UInt8 = 0x05, oidTag: UInt8 = 0x06
    package static let enumeratedTag: UInt8 = 0x0A, utf8StringTag: UInt8 = 0x0C
    package static let sequenceTag: UInt8 = 0x30, setTag: UInt8 = 0x31

    /// Tag, definite length (short form below 128, else long form), content.
    package static func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        [tag] + length(content.count) + content
    }

    static func length(_ count: Int) -> [UInt8] {
        guard count >= 0x80 else { return [UInt8(count)] }
        let bytes = BigEndianBytes.of(UInt64(count)).drop(while: { $0 == 0 })
        return [0x80 | UInt8(bytes.count)] + bytes
    }

    package static func sequence(_ members: [[UInt8]]) -> [UInt8] { tlv(sequenceTag, members.flatMap { $0 }) }

    /// SET OF: DER orders the members by their encodings (X.690 §11.6).
    package static func set(_ members: [[UInt8]]) -> [UInt8] {
        tlv(setTag, members.sorted { $0.lexicographicallyPrecedes($1) }.flatMap { $0 })
    }

    package static func boolean(_ value: Bool) -> [UInt8] { tlv(booleanTag, [value ? 0xFF : 0x00]) }
    package static let null: [UInt8] = [nullTag, 0x00]

    /// An INTEGER holding `value`, in the fewest two's-complement bytes.
    package static func integer(_ value: Int64) -> [UInt8] {
        var bytes = BigEndianBytes.of(value)
        while bytes.count > 1 && ((bytes[0] == 0x00 && bytes[1] & 0x80 == 0) || (bytes[0] == 0xFF && bytes[1] & 0x80 != 0)) {
            bytes.removeFirst()
        }
        return tlv(integerTag, bytes)
    }

    /// An INTEGER holding the unsigned big-endian `magnitude` (a serial number, an RSA modulus).
    package static func unsignedInteger(_ magnitude: [UInt8]) -> [UInt8] {
        var bytes = Array(magnitude.drop(while: { $0 == 0 }))
        if bytes.isEmpty || bytes[0] & 0x80 != 0 { bytes.insert(0, at: 0) }
        return tlv(integerTag, bytes)
    }

    package static func enumerated(_ value: Int64) -> [UInt8] {
        var encoded = integer(value)
        encoded[0] = enumeratedTag
        return encoded
    }

    package static func octetString(_ bytes: [UInt8]) -> [UInt8] { tlv(octetStringTag, bytes) }
    /// A BIT STRING of whole bytes (no unused bits).
    package static func bitString(_ bytes: [UInt8]) -> [UInt8] { tlv(bitStringTag, [0] + bytes) }

    /// A named-bit BIT STRING (keyUsage) with the given bits set, bit 0 being the most significant
    /// bit of the first byte. DER drops trailing zero bits (X.690 §11.2.2): an empty set is `03 01 00`.
    package static func namedBits(_ bits: Set<Int>) -> [UInt8] {
        guard let highest = bits.max() else { return tlv(bitStringTag, [0]) }
        precondition(bits.allSatisfy { $0 >= 0 }, "negative bit number")
        var bytes = [UInt8](repeating: 0, count: highest / 8 + 1)
        for bit in bits { bytes[bit / 8] |= 0x80 >> UInt8(bit % 8) }
        return tlv(bitStringTag, [UInt8(7 - highest % 8)] + bytes)
    }
    package static func utf8String(_ text: String) -> [UInt8] { tlv(utf8StringTag, Array(text.utf8)) }

    /// An OBJECT IDENTIFIER from its dotted form ("1.3.6.1.4.1.45724.1.1.4"); the caller passes a
    /// well-formed one (at least two arcs, the first 0–2).
    package static func oid(_ dotted: String) -> [UInt8] {
        let arcs = dotted.split(separator: ".").map { UInt64($0)! }
        precondition(arcs.count >= 2 && arcs[0] <= 2, "malformed OID \(dotted)")
        var content = base128(arcs[0] * 40 + arcs[1])
        for arc in arcs.dropFirst(2) { content += base128(arc) }
        return tlv(oidTag, content)
    }

    private static func base128(_ value: UInt64) -> [UInt8] {
        var out = [UInt8(value & 0x7F)]
        var rest = value >> 7
        while rest > 0 {
            out.insert(UInt8(rest & 0x7F) | 0x80, at: 0)
            rest >>= 7
        }
        return out
    }

    /// `[number] EXPLICIT`: a constructed context-specific tag around one encoded value. Numbers
    /// of 31 and above take the high-tag-number form (KeyDescription's tags run to 7xx).
    package static func explicit(_ number: UInt64, _ encoded: [UInt8]) -> [UInt8] {
        contextTag(number, constructed: true) + length(encoded.count) + encoded
    }

    /// `[number] IMPLICIT` primitive: the context tag replaces the value's own (`content` is the
    /// value's content octets).
    package static func implicit(_ number: UInt64, content: [UInt8]) -> [UInt8] {
        contextTag(number, constructed: false) + length(content.count) + content
    }

    static func contextTag(_ number: UInt64, constructed: Bool) -> [UInt8] {
        let first: UInt8 = 0x80 | (constructed ? 0x20 : 0)
        guard number >= 31 else { return [first | UInt8(number)] }
        return [first | 0x1F] + base128(number)
    }
}
