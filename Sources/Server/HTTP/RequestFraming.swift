/// Whether a request's body can be told apart from what follows it (RFC 9112 §6.1, §6.3), judged
/// from its head before the body is read. libmicrohttpd reads only the first Content-Length and
/// the first Transfer-Encoding, takes any Transfer-Encoding but chunked for a body that lasts
/// until the connection closes, and lets Transfer-Encoding win over Content-Length — where another
/// reader of the same bytes (a proxy) may see another request. So every field is looked at here,
/// and a request whose framing two readers could read two ways is refused (`badInput`, its
/// connection closed after the answer); so is one that declares a body over the limit (`413`).
enum RequestFraming {
    /// The problem a request's head is refused with, or `nil` when its body can be read.
    static func problem(version: String, contentLengths: [String], transferEncodings: [String], bodyLimit: Int) -> Problem? {
        if let last = transferEncodings.last {
            if !contentLengths.isEmpty {
                return Problem(400, .badInput, "the request has both Transfer-Encoding and Content-Length: where its body ends is ambiguous (RFC 9112, 6.1)")
            }
            if version == "HTTP/1.0" {
                return Problem(400, .badInput, "an HTTP/1.0 request has Transfer-Encoding, which HTTP/1.0 does not have (RFC 9112, 6.1)")
            }
            if transferEncodings.count == 1, lowered(last) == Array("chunked".utf8) { return nil }
            // The last coding of the last field: chunked or not.
            var coding = Array(last.utf8)
            if let comma = coding.lastIndex(of: UInt8(ascii: ",")) { coding = Array(coding[(comma + 1)...]) }
            coding = Array(coding.drop { $0 == 0x20 || $0 == 0x09 }.prefix { $0 != 0x20 && $0 != 0x09 && $0 != UInt8(ascii: ";") })
            if lowered(coding) == Array("chunked".utf8) {
                return Problem(501, .badInput, "the server decodes no transfer coding but chunked, once (RFC 9112, 6.1)")
            }
            return Problem(400, .badInput, "chunked is not the request's last transfer coding: where its body ends cannot be known (RFC 9112, 6.3)")
        }
        if !lengthsAgree(contentLengths) {
            return Problem(400, .badInput, "the request's Content-Length fields differ, or one is not a length: where its body ends is ambiguous (RFC 9112, 6.3)")
        }
        // The length libmicrohttpd reads (the first field), when it is one number: past the limit,
        // the body is refused unread.
        if let first = contentLengths.first {
            let digits = Array(first.utf8.drop { $0 == 0x20 || $0 == 0x09 })
            if !digits.isEmpty, digits.allSatisfy({ (0x30...0x39).contains($0) }),
               digits.reduce(0 as UInt64, { $0 > (UInt64.max - 9) / 10 ? .max : $0 * 10 + UInt64($1 - 0x30) }) > UInt64(bodyLimit) {
                return Problem(413, .badInput, "the body is larger than the server accepts")
            }
        }
        return nil
    }

    /// Whether every Content-Length field is a list of lengths, all one length (a list of one
    /// length repeated is that length, RFC 9112 §6.3), each element digits.
    static func lengthsAgree(_ fields: [String]) -> Bool {
        var seen: UInt64?
        for field in fields {
            let bytes = Array(field.utf8)
            var i = 0
            while true {
                while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x09 { i += 1 }
                var length: UInt64 = 0, digits = 0
                while i < bytes.count, (0x30...0x39).contains(bytes[i]) {
                    if length > (UInt64.max - 9) / 10 { return false }
                    length = length * 10 + UInt64(bytes[i] - 0x30)
                    i += 1
                    digits += 1
                }
                while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x09 { i += 1 }
                if digits == 0 || (i < bytes.count && bytes[i] != UInt8(ascii: ",")) || (seen != nil && seen != length) { return false }
                seen = length
                guard i < bytes.count else { break }
                i += 1  // past the comma
            }
        }
        return true
    }

    /// ASCII letters lowered (header names and codings are compared case-insensitively, byte by byte).
    private static func lowered(_ text: some Sequence<UInt8>) -> [UInt8] { text.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 } }
    private static func lowered(_ text: String) -> [UInt8] { lowered(text.utf8) }
}
