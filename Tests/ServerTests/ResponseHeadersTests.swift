import Testing
@testable import Server

/// The headers an answer carries, as the C core adds them: a line break in a value cannot start a
/// header of its own, and a name that is not a token is left out.
@Suite struct ResponseHeadersTests {
    /// The fields the C core would add: each name and value up to its NUL, `count` of them.
    func unpacked(_ headers: [(String, String)]) -> [[String]] {
        let (bytes, count) = ResponseHeaders.packed(headers)
        let parts = bytes.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        #expect(bytes.last == 0 || bytes.isEmpty)
        #expect(parts.count == (bytes.isEmpty ? 1 : 2 * count + 1))
        return stride(from: 0, to: 2 * count, by: 2).map { [parts[$0], parts[$0 + 1]] }
    }

    @Test func fieldsAreWrittenAsTheyAre() {
        #expect(unpacked([]) == [])
        #expect(unpacked([("Location", "/accounts/a"), ("WWW-Authenticate", #"Bearer realm="authctl""#)])
                == [["Location", "/accounts/a"], ["WWW-Authenticate", #"Bearer realm="authctl""#]])
        #expect(unpacked([("Allow", "  GET, POST \t")]) == [["Allow", "GET, POST"]])
    }

    @Test func aLineBreakInAValueCannotStartAHeader() {
        #expect(unpacked([("Access-Control-Allow-Origin", "https://a.example\r\nSet-Cookie: s=1")])
                == [["Access-Control-Allow-Origin", "https://a.example  Set-Cookie: s=1"]])
        #expect(unpacked([("Location", "/a\nSet-Cookie: s=1\n")]) == [["Location", "/a Set-Cookie: s=1"]])
        #expect(unpacked([("Location", "/a\rX: 1")]) == [["Location", "/a X: 1"]])
    }

    @Test func aNULInAValueEndsNeitherItNorTheFieldsAfterIt() {
        #expect(unpacked([("Location", "/a\u{0}b\u{1}c\u{7F}d\te"), ("Allow", "GET")]) == [["Location", "/a b c d\te"], ["Allow", "GET"]])
    }

    @Test func aNameThatIsNotATokenIsLeftOut() {
        for name in ["", "Set-Cookie: s", "X\r\nSet-Cookie", "X Y", "X\u{0}", "Caf\u{E9}", "X\t"] {
            #expect(ResponseHeaders.field(name: name, value: "v") == nil, "\(name)")
        }
        #expect(unpacked([("Bad Name", "v"), ("Good", "v")]) == [["Good", "v"]])
        #expect(ResponseHeaders.field(name: "!#$%&'*+-.^_`|~Az09", value: "v") != nil)
    }
}
