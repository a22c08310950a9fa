import Testing
@testable import VirtualAuthenticator

/// ``Origin/parsed(_:)`` remembers the last origin that parsed, and is ``Origin/init(parsing:)``
/// for every text, in any order.
@Suite struct OriginTests {
    @Test func rememberedOriginsAreWhatParsingGives() throws {
        let texts = ["https://a.example", "https://a.example:8443/path", "https://a.example", "https://B.example",
                     "https://bücher.example", "http://localhost:3000", "https://a.example"]
        for text in texts + texts.reversed() {
            #expect(try Origin.parsed(text) == Origin(parsing: text))
        }
    }

    @Test func anOriginThatFailsFailsEveryTime() throws {
        _ = try Origin.parsed("https://a.example")
        for text in ["http://a.example", "https://192.168.0.1", "not a url", "http://a.example"] {
            #expect(throws: AuthenticatorError.self) { try Origin.parsed(text) }
        }
        #expect(try Origin.parsed("https://a.example").host == "a.example")
    }
}
