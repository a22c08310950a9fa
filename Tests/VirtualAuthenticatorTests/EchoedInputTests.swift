import Testing
@testable import VirtualAuthenticator

/// An echoed value is whole up to its limit and cut past it, its whole length said; a path's limit
/// is what a path can be; a message of another's keeps its words, each long one cut.
@Suite struct EchoedInputTests {
    @Test func aValueIsWholeUpToTheLimitAndCutPastIt() {
        let limit = String(repeating: "a", count: EchoedInput.limit)
        #expect(EchoedInput.text(limit) == limit)
        let over = limit + "b"
        #expect(EchoedInput.text(over) == String(repeating: "a", count: EchoedInput.limit - 1) + "… (65 characters)")
        // Characters, not bytes: 64 two-byte letters are whole.
        let wide = String(repeating: "é", count: EchoedInput.limit)
        #expect(EchoedInput.text(wide) == wide)
    }

    @Test func aPathIsWholeUpToPathMaxAndCutPastIt() {
        let long = "/" + String(repeating: "p", count: EchoedInput.pathLimit - 1)
        #expect(EchoedInput.path(long) == long)
        #expect(EchoedInput.text(long) != long)
        let over = long + "q"
        #expect(EchoedInput.path(over) == String(long.prefix(EchoedInput.pathLimit - 1)) + "… (4097 characters)")
    }

    @Test func eachLongWordOfAMessageIsCut() {
        let number = "1" + String(repeating: "2", count: 100_000)
        #expect(EchoedInput.words("Number \(number) is not representable in Swift.")
                == "Number 1\(String(repeating: "2", count: 62))… (100001 characters) is not representable in Swift.")
        let short = "Invalid value around character 15."
        #expect(EchoedInput.words(short) == short)
    }
}
