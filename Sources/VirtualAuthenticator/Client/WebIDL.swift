import Foundation

/// WebIDL §3.2 "JavaScript type mapping", for the values `JSON.parse` can make: how a page's
/// options object becomes the IDL dictionaries of WebAuthn L3 (§5.1.8, §5.1.9). The JSON values
/// are what `JSONSerialization` gives: `String`, `NSNumber` (numbers and booleans), `NSNull`,
/// `[Any]` (a JS Array) and `[String: Any]` (a plain JS Object).
///
/// The primitive conversions never fail on JSON values: `DOMString` is ECMAScript ToString (`5`
/// becomes `"5"`, `null` becomes `"null"`), `boolean` is ToBoolean, the integer types are ToNumber
/// then modulo 2^32. Only dictionaries, sequences and records refuse a value of the wrong kind
/// (a TypeError, authctl's `badInput`), and a missing `required` member is a TypeError too.
package enum WebIDL {
    // MARK: - The conversions (WebIDL §3.2.4 – §3.2.10, §3.2.18 – §3.2.20)

    /// `DOMString` (§3.2.10): ECMAScript ToString.
    package static func domString(_ value: Any) -> String { toJSString(value) }

    /// `boolean` (§3.2.4): ECMAScript ToBoolean — never an error, `"false"` is true.
    package static func boolean(_ value: Any) -> Bool {
        switch value {
        case is NSNull: return false
        case let s as String: return !s.isEmpty
        case let n as NSNumber:
            if isBoolean(n) { return n.boolValue }
            let d = number(n)
            return !(d == 0 || d.isNaN)
        default: return true  // arrays and objects
        }
    }

    /// `unsigned long` (§3.2.4.8, ConvertToInt with 32 bits, unsigned): ToNumber, NaN and the
    /// infinities to 0, truncated, modulo 2^32.
    package static func unsignedLong(_ value: Any) -> UInt32 {
        UInt32(exactly: modulo32(toNumber(value)))!
    }

    /// `long` (§3.2.4.7): as `unsigned long`, then values from 2^31 wrap to negative.
    package static func long(_ value: Any) -> Int32 {
        let x = modulo32(toNumber(value))
        return Int32(exactly: x >= 2_147_483_648 ? x - 4_294_967_296 : x)!
    }

    /// An enumeration-like `DOMString` (WebAuthn L3 keeps its enums as DOMString members so that
    /// unknown values are ignored, §2.1.1): the value when it is one of `E`'s, else `nil`.
    package static func enumeration<E: RawRepresentable>(_ value: Any, as type: E.Type = E.self) -> E? where E.RawValue == String {
        E(rawValue: domString(value))
    }

    /// A dictionary type (§3.2.18): `null` is the empty dictionary; an Array is an Object, whose
    /// members (none of a WebAuthn dictionary's names) are absent; a string, number or boolean is
    /// a TypeError.
    package static func dictionary(_ value: Any, path: String) throws(AuthenticatorError) -> [String: Any] {
        // The object first: asking whether a Swift dictionary `is [Any]` bridges it to NSDictionary.
        switch value {
        case let object as [String: Any]: return object
        case is NSNull, is [Any]: return [:]
        default: throw typeError(path, "a dictionary (a JSON object), got \(kind(value))")
        }
    }

    /// `sequence<T>` (§3.2.19): an iterable Object — in JSON, an Array. A string, `null` or a
    /// plain object (no @@iterator) is a TypeError.
    package static func sequence(_ value: Any, path: String) throws(AuthenticatorError) -> [Any] {
        guard let array = value as? [Any] else { throw typeError(path, "a sequence (a JSON array), got \(kind(value))") }
        return array
    }

    /// `record<DOMString, T>` (§3.2.20): any Object; its own enumerable keys, in property order
    /// (integer keys ascending, then the others; JSON objects lose their order, so those are
    /// sorted). `null` or a primitive is a TypeError.
    package static func record(_ value: Any, path: String) throws(AuthenticatorError) -> [(key: String, value: Any)] {
        switch value {
        case let array as [Any]: return array.enumerated().map { (String($0.offset), $0.element) }
        case let object as [String: Any]: return object.keys.sorted().map { ($0, object[$0]!) }
        default: throw typeError(path, "a record (a JSON object), got \(kind(value))")
        }
    }

    /// A missing `required` dictionary member (§3.2.18 step 4.1.4.3).
    package static func missing(_ path: String) -> AuthenticatorError {
        AuthenticatorError(.badInput, "\(path) is required but missing (TypeError)")
    }

    static func typeError(_ path: String, _ expected: String) -> AuthenticatorError {
        AuthenticatorError(.badInput, "\(path): expected \(expected) (TypeError)")
    }

    // MARK: - ECMAScript abstract operations on JSON values

    /// ECMAScript ToString (§7.1.17): numbers as Number::toString, `null` as `"null"`, an Array as
    /// its elements joined with commas (`null` elements empty), an Object as `"[object Object]"`.
    package static func toJSString(_ value: Any) -> String {
        switch value {
        case let s as String: return s
        case is NSNull: return "null"
        case let n as NSNumber: return isBoolean(n) ? (n.boolValue ? "true" : "false") : numberToString(number(n))
        case let array as [Any]: return array.map { $0 is NSNull ? "" : toJSString($0) }.joined(separator: ",")
        default: return "[object Object]"
        }
    }

    /// ECMAScript ToNumber (§7.1.4): booleans 0 or 1, `null` 0, strings by StringToNumber, an
    /// Array or Object through its string (ToPrimitive: `[]` is 0, `[7]` is 7, `{}` is NaN).
    package static func toNumber(_ value: Any) -> Double {
        switch value {
        case is NSNull: return 0
        case let n as NSNumber: return isBoolean(n) ? (n.boolValue ? 1 : 0) : number(n)
        case let s as String: return stringToNumber(s)
        default: return stringToNumber(toJSString(value))
        }
    }

    /// ECMAScript StringToNumber (§7.1.4.1.1): white space trimmed; empty is 0; `0x`, `0o`, `0b`
    /// integers; `Infinity` with an optional sign; a decimal literal with an optional sign;
    /// anything else NaN.
    package static func stringToNumber(_ text: String) -> Double {
        let scalars = Array(text.unicodeScalars)
        var start = 0, end = scalars.count
        while start < end, isJSWhiteSpace(scalars[start]) { start += 1 }
        while end > start, isJSWhiteSpace(scalars[end - 1]) { end -= 1 }
        let s = String(String.UnicodeScalarView(scalars[start..<end]))
        if s.isEmpty { return 0 }
        for (prefix, radix) in [("0x", 16.0), ("0X", 16), ("0o", 8), ("0O", 8), ("0b", 2), ("0B", 2)] where s.hasPrefix(prefix) {
            let digits = s.dropFirst(2)
            guard !digits.isEmpty else { return .nan }
            var value = 0.0
            for c in digits {
                // ASCII digits only: JS's Number() knows no fullwidth forms.
                guard c.isASCII, let d = c.hexDigitValue, Double(d) < radix else { return .nan }
                value = value * radix + Double(d)
            }
            return value
        }
        switch s {
        case "Infinity", "+Infinity": return .infinity
        case "-Infinity": return -.infinity
        default: break
        }
        return isDecimalLiteral(s) ? Double(s) ?? .nan : .nan
    }

    /// Number::toString (ECMAScript §6.1.6.1.20): the shortest digits that round-trip, written
    /// plainly from 1e-6 up to 1e21 and in exponent form outside.
    package static func numberToString(_ x: Double) -> String {
        if x.isNaN { return "NaN" }
        if x == 0 { return "0" }
        if x.isInfinite { return x < 0 ? "-Infinity" : "Infinity" }
        if x < 0 { return "-" + numberToString(-x) }
        // Swift's description holds the shortest round-trip digits; take them and the exponent.
        let text = x.description
        let parts = text.split(separator: "e")
        let mantissa = parts[0], exponent = parts.count > 1 ? Int(parts[1])! : 0
        let pieces = mantissa.split(separator: ".", omittingEmptySubsequences: false)
        let integer = pieces[0], fraction = pieces.count > 1 ? pieces[1] : ""
        var digits = Array(integer + fraction)
        var n = integer.count + exponent  // value = 0.digits × 10^n
        while digits.first == "0" { digits.removeFirst(); n -= 1 }
        while digits.last == "0" { digits.removeLast() }
        let k = digits.count, d = String(digits)
        if k <= n && n <= 21 { return d + String(repeating: "0", count: n - k) }
        if 0 < n && n <= 21 { return String(digits[..<n]) + "." + String(digits[n...]) }
        if -6 < n && n <= 0 { return "0." + String(repeating: "0", count: -n) + d }
        let e = n - 1, sign = e < 0 ? "-" : "+"
        return (k == 1 ? d : String(digits[0]) + "." + String(digits[1...])) + "e" + sign + String(abs(e))
    }

    /// A JSON number as `JSON.parse` reads it: the nearest double. (Integers beyond 64 bits come as
    /// NSDecimalNumber, whose `doubleValue` is not correctly rounded; its text is.)
    static func number(_ n: NSNumber) -> Double {
        if n is NSDecimalNumber, let exact = Double(n.stringValue) { return exact }
        return n.doubleValue
    }

    /// JSON `true`/`false` come back as NSNumber with the `c` (char) type code; numbers never do.
    static func isBoolean(_ n: NSNumber) -> Bool { String(cString: n.objCType) == "c" }

    private static func modulo32(_ x: Double) -> Double {
        guard x.isFinite, x != 0 else { return 0 }
        let r = x.rounded(.towardZero).truncatingRemainder(dividingBy: 4_294_967_296)
        return r < 0 ? r + 4_294_967_296 : r + 0  // + 0 turns -0 into 0
    }

    /// StrDecimalLiteral without `Infinity`: [+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?
    private static func isDecimalLiteral(_ s: String) -> Bool {
        var u = Substring(s).utf8[...]
        func digits() -> Int {
            var count = 0
            while let c = u.first, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) { u = u.dropFirst(); count += 1 }
            return count
        }
        if let c = u.first, c == UInt8(ascii: "+") || c == UInt8(ascii: "-") { u = u.dropFirst() }
        var mantissa = digits()
        if u.first == UInt8(ascii: ".") { u = u.dropFirst(); mantissa += digits() }
        guard mantissa > 0 else { return false }
        if let c = u.first, c == UInt8(ascii: "e") || c == UInt8(ascii: "E") {
            u = u.dropFirst()
            if let c = u.first, c == UInt8(ascii: "+") || c == UInt8(ascii: "-") { u = u.dropFirst() }
            guard digits() > 0 else { return false }
        }
        return u.isEmpty
    }

    /// ECMAScript WhiteSpace and LineTerminator (§12.2, §12.3): what StringToNumber trims.
    private static func isJSWhiteSpace(_ c: Unicode.Scalar) -> Bool {
        switch c.value {
        case 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF: true
        default: false
        }
    }

    static func kind(_ value: Any) -> String {
        switch value {
        case is String: "a string"
        case is NSNull: "null"
        case let n as NSNumber: isBoolean(n) ? "a boolean" : "a number"
        case is [Any]: "an array"
        default: "an object"
        }
    }
}
