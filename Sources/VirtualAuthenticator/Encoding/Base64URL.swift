/// Unpadded base64url (RFC 4648 §5), the encoding of every binary field in WebAuthn's JSON.
public enum Base64URL {
    private static let alphabet = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        let count = (bytes.count * 4 + 2) / 3
        return String(unsafeUninitializedCapacity: count) { out in
            var i = 0
            forEachCharacter(of: bytes) { out[i] = $0; i += 1 }
            return i
        }
    }

    /// Appends the encoding of `bytes` to `out`, as UTF-8.
    public static func append(_ bytes: some Collection<UInt8>, to out: inout [UInt8]) {
        out.reserveCapacity(out.count + (bytes.count * 4 + 2) / 3)
        forEachCharacter(of: bytes) { out.append($0) }
    }

    @inline(__always)
    private static func forEachCharacter(of bytes: some Collection<UInt8>, _ emit: (UInt8) -> Void) {
        alphabet.withUnsafeBufferPointer { alphabet in
            var it = bytes.makeIterator()
            while let b0 = it.next() {
                let b1 = it.next()
                let b2 = it.next()
                emit(alphabet[Int(b0 >> 2)])
                emit(alphabet[Int((b0 & 0x03) << 4 | (b1 ?? 0) >> 4)])
                if let b1 { emit(alphabet[Int((b1 & 0x0F) << 2 | (b2 ?? 0) >> 6)]) }
                if let b2 { emit(alphabet[Int(b2 & 0x3F)]) }
            }
        }
    }

    /// Decodes base64url as WebAuthn's JSON forms hold it (L3 §5.1.8, Base64URLString): only the
    /// URL-safe alphabet `A–Z a–z 0–9 - _`, no padding, no white space; also refused, as by
    /// ``decode(_:)``, a length of 4n+1 and non-zero trailing bits (which would not encode back to
    /// the same text).
    public static func decodeStrict(_ text: String) -> [UInt8]? {
        let canonical = text.utf8.allSatisfy { c in
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(c) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(c)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) || c == UInt8(ascii: "-") || c == UInt8(ascii: "_")
        }
        return canonical ? decode(text) : nil
    }

    /// Decodes base64url leniently, for what a person types (command-line ids): accepts standard
    /// base64 characters and trailing `=` padding too; rejects anything else, and non-zero
    /// trailing bits.
    public static func decode(_ text: String) -> [UInt8]? {
        var values = [UInt8]()
        values.reserveCapacity(text.utf8.count)
        var sawPadding = false
        for c in text.utf8 {
            if c == UInt8(ascii: "=") { sawPadding = true; continue }
            if sawPadding { return nil }
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): values.append(c - 65)
            case UInt8(ascii: "a")...UInt8(ascii: "z"): values.append(c - 71)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): values.append(c + 4)
            case UInt8(ascii: "-"), UInt8(ascii: "+"): values.append(62)
            case UInt8(ascii: "_"), UInt8(ascii: "/"): values.append(63)
            default: return nil
            }
        }
        if values.count % 4 == 1 { return nil }
        var out = [UInt8]()
        out.reserveCapacity(values.count * 3 / 4)
        var i = 0
        while i < values.count {
            let chunk = values[i..<min(i + 4, values.count)]
            let v = chunk.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (18 - 6 * $1.offset) }
            let produced = chunk.count - 1
            for k in 0..<produced { out.append(UInt8(truncatingIfNeeded: v >> (16 - 8 * k))) }
            let unusedBits = v & ((1 << (24 - 8 * UInt32(produced))) - 1)
            if unusedBits != 0 { return nil }
            i += 4
        }
        return out
    }
}
