import Testing
@testable import VirtualAuthenticator

/// WebAuthn L3 §5.11.1, with a small suffix list: labels, the five-label limit, and what counts as
/// the same origin.
@Suite struct RelatedOriginsTests {
    let suffixes = PublicSuffixList(text: "com\nnet\norg\nuk\nco.uk\nexample\ngithub.io\n")

    func origin(_ text: String) throws -> Origin { try Origin(parsing: text) }

    @Test func theRegistrableLabelIsTheOneBeforeThePublicSuffix() {
        #expect(RelatedOrigins.registrableLabel("login.example.co.uk", suffixes: suffixes) == "example")
        #expect(RelatedOrigins.registrableLabel("example.com", suffixes: suffixes) == "example")
        #expect(RelatedOrigins.registrableLabel("alice.github.io", suffixes: suffixes) == "alice")
        #expect(RelatedOrigins.registrableLabel("co.uk", suffixes: suffixes) == "")
    }

    @Test func anOriginIsAllowedWithinTheFirstFiveLabels() throws {
        let caller = try origin("https://shop.example.co.uk")
        #expect(RelatedOrigins.allowed(caller, by: ["https://shop.example.co.uk"], suffixes: suffixes))
        #expect(!RelatedOrigins.allowed(caller, by: ["https://example.co.uk"], suffixes: suffixes))  // same site, other origin
        #expect(!RelatedOrigins.allowed(caller, by: ["http://shop.example.co.uk"], suffixes: suffixes))  // not secure: skipped
        let five = (0..<5).map { "https://a\($0).com" }
        #expect(!RelatedOrigins.allowed(caller, by: five + ["https://shop.example.co.uk"], suffixes: suffixes))
        // A label already seen does not count again, so an origin of it still matches after five.
        #expect(RelatedOrigins.allowed(caller, by: ["https://example.com"] + five.prefix(4) + ["https://shop.example.co.uk"],
                                       suffixes: suffixes))
        // Entries that are no URL, or have no registrable label, are skipped without counting.
        #expect(RelatedOrigins.allowed(caller, by: ["not a url", "https://co.uk"] + five.prefix(4) + ["https://shop.example.co.uk"],
                                       suffixes: suffixes))
    }

    @Test func aCrossOriginCallIsCheckedAsTheSpecSays() throws {
        var context = CallerContext(origin: "https://login.example.com", topOrigin: "https://shop.example.net")
        let (origin, top) = try context.resolve(.authentication)
        #expect(origin.serialized == "https://login.example.com" && top?.serialized == "https://shop.example.net")
        context.topOrigin = "https://login.example.com/cart"
        #expect(try context.resolve(.authentication).top == nil)  // the same origin: no cross-origin call
        context.topOrigin = "https://shop.example.net"
        context.framePermission = false
        #expect(throws: AuthenticatorError.self) { try context.resolve(.registration) }
        context.framePermission = true
        context.userActivation = false
        #expect(throws: AuthenticatorError.self) { try context.resolve(.registration) }
        #expect(try context.resolve(.authentication).top != nil)  // a sign-in needs no activation
        context.mediation = .conditional
        #expect(throws: AuthenticatorError.self) { try context.resolve(.authentication) }
    }
}
