/// The URL's query and path as the server reads them. libmicrohttpd splits the query into its
/// arguments and has each name and value, and the path, percent-decoded by ``decode(_:)``; the
/// arguments are written again, in the order sent, as ``encoded(_:)`` says, so a route reads the
/// query as any query (`HTTPRequest.query`), whatever bytes it held.
enum QueryText {
    /// One argument: its name and value as decoded, the value `nil` when the argument had no `=`.
    struct Argument: Equatable {
        var name: [UInt8]
        var value: [UInt8]?
    }

    /// `name=value&…`, every byte but the unreserved ones (RFC 3986 §2.3) percent-encoded in
    /// upper-case hex; an argument without a value is its name alone.
    static func encoded(_ arguments: [Argument]) -> String {
        var text = [UInt8]()
        for (index, argument) in arguments.enumerated() {
            if index > 0 { text.append(UInt8(ascii: "&")) }
            append(argument.name, to: &text)
            if let value = argument.value {
                text.append(UInt8(ascii: "="))
                append(value, to: &text)
            }
        }
        return String(decoding: text, as: UTF8.self)
    }

    private static let hex = Array("0123456789ABCDEF".utf8)

    private static func append(_ bytes: [UInt8], to text: inout [UInt8]) {
        for byte in bytes {
            if isUnreserved(byte) {
                text.append(byte)
            } else {
                text += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
        }
    }

    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
        default: false
        }
    }

    /// Percent-decodes the NUL-terminated `text` in place, as libmicrohttpd's own decoding does but
    /// for `%00`, which is left as it is: a NUL would end the path where the server reads it, so
    /// that `/accounts/ID%00x` named account ID; left as text, it names nothing. A `%` not followed
    /// by two hex digits is kept as it came. Its new length (a NUL written there).
    static func decode(_ text: UnsafeMutablePointer<UInt8>) -> Int {
        var read = 0, written = 0
        while text[read] != 0 {
            if text[read] == UInt8(ascii: "%"), let high = hexDigit(text[read + 1]), let low = hexDigit(text[read + 2]), high | low != 0 {
                text[written] = high << 4 | low
                read += 3
            } else {
                text[written] = text[read]
                read += 1
            }
            written += 1
        }
        text[written] = 0
        return written
    }

    /// `decode(_:)` on bytes (without their NUL).
    static func decoded(_ bytes: [UInt8]) -> [UInt8] {
        var text = bytes + [0]
        let count = text.withUnsafeMutableBufferPointer { decode($0.baseAddress!) }
        return Array(text.prefix(count))
    }

    private static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
