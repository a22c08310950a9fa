/// Unpadded base64url (RFC 4648 §5), the encoding of every binary field in WebAuthn's JSON.
public enum Base64URL {
    private static let alphabet = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        String(unsafeUninitializedCapacity: encodedCount(bytes.count)) { out in
            write(bytes, to: UnsafeMutableBufferPointer(rebasing: out[...]))
        }
    }

    /// Appends the encoding of `bytes` to `out`, as UTF-8.
    package static func append(_ bytes: some Collection<UInt8>, to out: inout [UInt8]) {
        let start = out.count, count = encodedCount(bytes.count)
        out.append(contentsOf: repeatElement(0, count: count))
        out.withUnsafeMutableBufferPointer { buffer in
            _ = write(bytes, to: UnsafeMutableBufferPointer(rebasing: buffer[start..<start + count]))
        }
    }

    /// The length of the encoding of `count` bytes: four characters per three bytes, no padding.
    private static func encodedCount(_ count: Int) -> Int { (count * 4 + 2) / 3 }

    /// Writes the encoding into `out` (``encodedCount(_:)`` long); returns its length.
    private static func write(_ bytes: some Collection<UInt8>, to out: UnsafeMutableBufferPointer<UInt8>) -> Int {
        if let written = bytes.withContiguousStorageIfAvailable({ write($0, to: out) }) { return written }
        return Array(bytes).withUnsafeBufferPointer { write($0, to: out) }
    }

    private static func write(_ input: UnsafeBufferPointer<UInt8>, to out: UnsafeMutableBufferPointer<UInt8>) -> Int {
        alphabet.withUnsafeBufferPointer { alphabet in
            var i = 0, o = 0
            while i + 3 <= input.count {
                let group = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
                out[o] = alphabet[Int(group >> 18)]
                out[o + 1] = alphabet[Int(group >> 12 & 0x3F)]
                out[o + 2] = alphabet[Int(group >> 6 & 0x3F)]
                out[o + 3] = alphabet[Int(group & 0x3F)]
                i += 3
                o += 4
            }
            switch input.count - i {
            case 1:
                out[o] = alphabet[Int(input[i] >> 2)]
                out[o + 1] = alphabet[Int((input[i] & 0x03) << 4)]
                o += 2
            case 2:
                out[o] = alphabet[Int(input[i] >> 2)]
                out[o + 1] = alphabet[Int((input[i] & 0x03) << 4 | input[i + 1] >> 4)]
                out[o + 2] = alphabet[Int((input[i + 1] & 0x0F) << 2)]
                o += 3
            default: break
            }
            return o
        }
    }

    /// Decodes base64url as WebAuthn's JSON forms hold it (L3 §5.1.8, Base64URLString): only the
    /// URL-safe alphabet `A–Z a–z 0–9 - _`, no padding, no white space; also refused, as by
    /// ``decode(_:)``, a length of 4n+1 and non-zero trailing bits (which would not encode back to
    /// the same text).
    package static func decodeStrict(_ text: String) -> [UInt8]? {
        decode(text, strict: true)
    }

    /// As ``decodeStrict(_:)``, but a last character with non-zero unused bits is read as the
    /// bits that count (`"AB"` is the byte 0x00, whose encoding is `"AA"`), as Chromium's
    /// `parseCreationOptionsFromJSON()` / `parseRequestOptionsFromJSON()` do (forgiving-base64).
    package static func decodeIgnoringTrailingBits(_ text: String) -> [UInt8]? {
        decode(text, strict: true, trailingBits: true)
    }

    /// Decodes base64url leniently, for what a person types (command-line ids): accepts standard
    /// base64 characters and trailing `=` padding too; rejects anything else, and non-zero
    /// trailing bits.
    public static func decode(_ text: String) -> [UInt8]? {
        decode(text, strict: false)
    }

    /// Each character's six bits; 0xFF for a character of neither alphabet.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, c) in alphabet.enumerated() { table[Int(c)] = UInt8(value) }
        table[Int(UInt8(ascii: "+"))] = 62
        table[Int(UInt8(ascii: "/"))] = 63
        return table
    }()

    /// One pass: four characters make three bytes; a last group of two or three characters makes
    /// one or two, and its unused low bits must be zero; a last group of one is no encoding.
    private static func decode(_ text: String, strict: Bool, trailingBits: Bool = false) -> [UInt8]? {
        let utf8 = text.utf8
        if let result = utf8.withContiguousStorageIfAvailable({ decode($0, strict: strict, trailingBits: trailingBits) }) { return result }
        return decode(Array(utf8), strict: strict, trailingBits: trailingBits)
    }

    private static func decode(_ characters: some Collection<UInt8>, strict: Bool, trailingBits: Bool) -> [UInt8]? {
        var out = [UInt8]()
        out.reserveCapacity(characters.count * 3 / 4)
        var group: UInt32 = 0, inGroup = 0
        var sawPadding = false
        let ok = values.withUnsafeBufferPointer { values in
            for c in characters {
                if c == UInt8(ascii: "=") && !strict { sawPadding = true; continue }
                let value = values[Int(c)]
                guard !sawPadding, value != 0xFF, !strict || (c != UInt8(ascii: "+") && c != UInt8(ascii: "/")) else { return false }
                group = group << 6 | UInt32(value)
                inGroup += 1
                if inGroup == 4 {
                    out.append(UInt8(truncatingIfNeeded: group >> 16))
                    out.append(UInt8(truncatingIfNeeded: group >> 8))
                    out.append(UInt8(truncatingIfNeeded: group))
                    group = 0
                    inGroup = 0
                }
            }
            return true
        }
        guard ok else { return nil }
        switch inGroup {
        case 1: return nil
        case 2:
            guard trailingBits || group & 0x0F == 0 else { return nil }
            out.append(UInt8(truncatingIfNeeded: group >> 4))
        case 3:
            guard trailingBits || group & 0x03 == 0 else { return nil }
            out.append(UInt8(truncatingIfNeeded: group >> 10))
            out.append(UInt8(truncatingIfNeeded: group >> 2))
        default: break
        }
        return out
    }
}
