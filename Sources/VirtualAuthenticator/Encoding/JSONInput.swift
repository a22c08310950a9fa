import Foundation

/// Reads a JSON document (RFC 8259) whose top level is an object into the values
/// `JSONSerialization` makes of it — `String`, `NSNumber`, `NSNull`, `[Any]`, `[String: Any]` —
/// without its detour through an intermediate tree. Only the plain JSON an options document is
/// made of is read here: strings without escapes, integers of up to 15 digits, `true`, `false`,
/// `null`, nesting up to 64 levels. Anything else — an escape, a fraction or exponent, a byte that
/// is not UTF-8, a string that begins with U+FEFF, malformed text — is left to `JSONSerialization` (`object(_:)` returns `nil`),
/// which then gives the same values or the same error as before.
enum JSONInput {
    /// The top-level object of `json`, or `nil` when `JSONSerialization` is to read it.
    static func object(_ json: [UInt8]) -> [String: Any]? {
        json.withUnsafeBufferPointer { buffer in
            var reader = Reader(bytes: buffer)
            reader.skipWhitespace()
            guard reader.next == UInt8(ascii: "{"), let object = reader.object() else { return nil }
            reader.skipWhitespace()
            return reader.position == buffer.count ? object : nil
        }
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var position = 0
        var depth = 0
        static let maximumDepth = 64

        var next: UInt8? { position < bytes.count ? bytes[position] : nil }

        mutating func skipWhitespace() {
            while let c = next, c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { position += 1 }
        }

        mutating func take(_ c: UInt8) -> Bool {
            skipWhitespace()
            guard next == c else { return false }
            position += 1
            return true
        }

        mutating func value() -> Any? {
            skipWhitespace()
            switch next {
            case UInt8(ascii: "{"): return object()
            case UInt8(ascii: "["): return array()
            case UInt8(ascii: "\""): return string()
            case UInt8(ascii: "t"): return literal("true", NSNumber(value: true))
            case UInt8(ascii: "f"): return literal("false", NSNumber(value: false))
            case UInt8(ascii: "n"): return literal("null", NSNull())
            case .some(let c) where c == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c): return integer()
            default: return nil
            }
        }

        mutating func object() -> [String: Any]? {
            guard take(UInt8(ascii: "{")), depth < Self.maximumDepth else { return nil }
            depth += 1
            defer { depth -= 1 }
            var object = [String: Any](minimumCapacity: 8)  // one allocation for an options dictionary
            if take(UInt8(ascii: "}")) { return object }
            repeat {
                skipWhitespace()
                guard next == UInt8(ascii: "\""), let key = string(), take(UInt8(ascii: ":")), let value = value() else { return nil }
                object[key] = value  // a repeated name: the last one stands, as in JSONSerialization
            } while take(UInt8(ascii: ","))
            return take(UInt8(ascii: "}")) ? object : nil
        }

        mutating func array() -> [Any]? {
            guard take(UInt8(ascii: "[")), depth < Self.maximumDepth else { return nil }
            depth += 1
            defer { depth -= 1 }
            var array = [Any]()
            if take(UInt8(ascii: "]")) { return array }
            repeat {
                guard let value = value() else { return nil }
                array.append(value)
            } while take(UInt8(ascii: ","))
            return take(UInt8(ascii: "]")) ? array : nil
        }

        /// A string without escapes or control characters, its bytes valid UTF-8.
        mutating func string() -> String? {
            position += 1  // the opening quote
            let start = position
            var ascii = true
            while let c = next, c != UInt8(ascii: "\"") {
                guard c >= 0x20, c != UInt8(ascii: "\\") else { return nil }
                if c >= 0x80 { ascii = false }
                position += 1
            }
            guard next != nil else { return nil }
            let content = UnsafeBufferPointer(rebasing: bytes[start..<position])
            // Foundation's reader drops a raw U+FEFF (EF BB BF) that begins a string or a name:
            // such a string is left to it, so the values stay what they were.
            if content.starts(with: [0xEF, 0xBB, 0xBF]) { return nil }
            position += 1  // the closing quote
            return ascii ? String(decoding: content, as: UTF8.self) : String(validating: content, as: UTF8.self)
        }

        /// `-? (0 | [1-9][0-9]{0,14})` followed by no fraction or exponent (`-0` is left alone too).
        mutating func integer() -> NSNumber? {
            let negative = next == UInt8(ascii: "-")
            if negative { position += 1 }
            let start = position
            var magnitude = 0
            while let c = next, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) {
                magnitude = magnitude * 10 + Int(c - UInt8(ascii: "0"))
                position += 1
                guard position - start <= 15 else { return nil }
            }
            let digits = position - start
            guard digits > 0, digits == 1 || bytes[start] != UInt8(ascii: "0"), !(negative && magnitude == 0) else { return nil }
            if let c = next, c == UInt8(ascii: ".") || c == UInt8(ascii: "e") || c == UInt8(ascii: "E") { return nil }
            return NSNumber(value: negative ? -magnitude : magnitude)
        }

        mutating func literal(_ text: StaticString, _ value: Any) -> Any? {
            let count = text.utf8CodeUnitCount
            guard bytes.count - position >= count,
                  memcmp(bytes.baseAddress! + position, text.utf8Start, count) == 0 else { return nil }
            position += count
            return value
        }
    }
}
