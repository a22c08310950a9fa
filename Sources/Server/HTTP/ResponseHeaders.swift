/// The headers an answer carries beyond its Content-Type and Cache-Control (`Allow`,
/// `WWW-Authenticate`, `Location`, CORS), made safe to write (RFC 9110 §5.1, §5.5) and packed for
/// the C core, which adds each as it is: no header a route or a request's bytes name can break a
/// line and so add a header of its own.
enum ResponseHeaders {
    /// A field as it is written, or `nil` when its name is not a token (it is then left out): a
    /// value's control characters (CR, LF, NUL and the rest but HTAB) become SP, as RFC 9110 §5.5
    /// lets a recipient make them, and whitespace around the value is dropped.
    static func field(name: String, value: String) -> (name: [UInt8], value: [UInt8])? {
        let name = Array(name.utf8)
        guard !name.isEmpty, name.allSatisfy(isTokenCharacter) else { return nil }
        var value = Array(value.utf8).map { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F ? 0x20 : $0 }
        while let last = value.last, last == 0x20 || last == 0x09 { value.removeLast() }
        return (name, Array(value.drop { $0 == 0x20 || $0 == 0x09 }))
    }

    /// Each field's name and value, NUL-terminated, one after the other (what the C core reads),
    /// and how many fields.
    static func packed(_ headers: [(String, String)]) -> (bytes: [UInt8], count: Int) {
        var bytes = [UInt8](), count = 0
        for (name, value) in headers {
            guard let field = field(name: name, value: value) else { continue }
            bytes += field.name + [0] + field.value + [0]
            count += 1
        }
        return (bytes, count)
    }

    /// tchar (RFC 9110 §5.6.2).
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }
}
