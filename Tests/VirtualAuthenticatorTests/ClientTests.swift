import Foundation
import Testing
@testable import VirtualAuthenticator

/// Expects `body` to throw an ``AuthenticatorError`` with `code`. Shared with CeremonyTests.
func expectAuthenticatorError<R>(
    _ code: AuthenticatorError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R
) {
    let error = #expect(throws: AuthenticatorError.self, sourceLocation: sourceLocation) { _ = try body() }
    #expect(error?.code == code, sourceLocation: sourceLocation)
}

/// PublicKeyCredentialCreationOptionsJSON for example.com, edited by `edit`. Shared with CeremonyTests.
func creationObject(_ edit: (inout [String: Any]) -> Void = { _ in }) -> [String: Any] {
    var o: [String: Any] = [
        "rp": ["id": "example.com", "name": "Example"],
        "user": ["id": "AQID", "name": "alice@example.com", "displayName": "Alice"],
        "challenge": "AAEC",
        "pubKeyCredParams": [["type": "public-key", "alg": -7]],
    ]
    edit(&o)
    return o
}

func requestObject(_ edit: (inout [String: Any]) -> Void = { _ in }) -> [String: Any] {
    var o: [String: Any] = ["rpId": "example.com", "challenge": "BAUG"]
    edit(&o)
    return o
}

func jsonBytes(_ object: Any) -> [UInt8] {
    Array(try! JSONSerialization.data(withJSONObject: object))
}

private let testSuffixes = PublicSuffixList(text: "com\nco.uk\n*.ck\n!www.ck\n")

private func validateRP(_ rpId: String?, origin: String) throws -> String {
    try RelyingPartyIdentifier.validate(rpId, for: try Origin(parsing: origin), suffixes: testSuffixes)
}

// MARK: - CollectedClientData

@Test func clientDataJSONHasTheFixedMemberOrder() {
    let data = CollectedClientData(type: .create, challenge: [0, 1, 2], origin: "https://example.com")
    let expected = #"{"type":"webauthn.create","challenge":"AAEC","origin":"https://example.com","crossOrigin":false}"#
    #expect(data.json == Array(expected.utf8))
    #expect(data.hash == SHA256.hash(Array(expected.utf8)))
}

@Test func clientDataJSONForGetAndCrossOrigin() {
    let data = CollectedClientData(type: .get, challenge: [0xfb, 0xff], origin: "https://a.example",
                                   crossOrigin: true, topOrigin: "https://top.example")
    let expected = #"{"type":"webauthn.get","challenge":"-_8","origin":"https://a.example","crossOrigin":true,"topOrigin":"https://top.example"}"#
    #expect(String(decoding: data.json, as: UTF8.self) == expected)
}

@Test func aNativeAppsClientDataJSONHasTypeChallengeAndOriginOnly() {
    var data = CollectedClientData(type: .create, challenge: [0, 1, 2], origin: "https://example.com")
    data.omitsCrossOrigin = true
    #expect(String(decoding: data.json, as: UTF8.self) == #"{"type":"webauthn.create","challenge":"AAEC","origin":"https://example.com"}"#)
}

@Test func clientDataJSONEscapesQuotesBackslashesAndControlCharacters() {
    let data = CollectedClientData(type: .create, challenge: [0], origin: "a\"b\\c\nd\u{1}e\u{1f}é")
    let expected = #"{"type":"webauthn.create","challenge":"AA","origin":"a\"b\\c\u000ad\u0001e\u001fé","crossOrigin":false}"#
    #expect(String(decoding: data.json, as: UTF8.self) == expected)
}

// MARK: - Base64URL

@Test(arguments: [
    ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy"),
])
func base64URLMatchesRFC4648Vectors(plain: String, encoded: String) {
    #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
    #expect(Base64URL.decode(encoded) == Array(plain.utf8))
}

@Test func base64URLUsesTheURLAlphabet() {
    #expect(Base64URL.encode([0xfb, 0xff, 0xbf]) == "-_-_")
    #expect(Base64URL.encode([0xfb, 0xff]) == "-_8")
    #expect(Base64URL.decode("-_-_") == [0xfb, 0xff, 0xbf])
    #expect(Base64URL.decode("-_8") == [0xfb, 0xff])
}

@Test func base64URLRoundTripsEveryByte() {
    let all = (0...255).map(UInt8.init)
    for length in 0...all.count where length % 37 == 0 || length < 5 {
        #expect(Base64URL.decode(Base64URL.encode(all.prefix(length))) == Array(all.prefix(length)))
    }
}

@Test(arguments: ["Zm9v!", "Zm 9v", "Zm9v\n", "Zm.v", "Zé"])
func base64URLRejectsCharactersOutsideTheAlphabet(text: String) {
    #expect(Base64URL.decode(text) == nil)
}

@Test(arguments: ["Z", "Zm9vY", "Zm9vYmFyZ"])
func base64URLRejectsALengthOfOneModFour(text: String) {
    #expect(Base64URL.decode(text) == nil)
}

@Test(arguments: ["Zh", "Zm9", "Zm9vYmF"])
func base64URLRejectsNonZeroTrailingBits(text: String) {
    #expect(Base64URL.decode(text) == nil)
}

// MARK: - Origin

@Test func httpsOriginParses() throws {
    let origin = try Origin(parsing: "https://Login.Example.com")
    #expect(origin.scheme == "https")
    #expect(origin.host == "login.example.com")
    #expect(origin.port == nil)
    #expect(origin.serialized == "https://login.example.com")
}

@Test func httpLocalhostIsASecureContext() throws {
    #expect(try Origin(parsing: "http://localhost:8080").serialized == "http://localhost:8080")
    #expect(try Origin(parsing: "http://app.localhost").serialized == "http://app.localhost")
}

@Test(arguments: ["http://example.com", "ftp://example.com", "example.com", "https://", "https://user:pw@example.com"])
func insecureOrMalformedOriginsAreSecurityErrors(text: String) {
    expectAuthenticatorError(.securityError) { try Origin(parsing: text) }
}

@Test(arguments: ["https://127.0.0.1", "https://192.168.1.20:8443", "https://[::1]", "http://127.0.0.1"])
func ipAddressHostsAreSecurityErrors(text: String) {
    expectAuthenticatorError(.securityError) { try Origin(parsing: text) }
}

@Test(arguments: ["http://127.0.0.1:8000", "http://127.0.0.2", "http://0x7f.1", "http://[::1]:8080", "http://[0:0:0:0:0:0:0:1]", "https://127.0.0.1"])
func aLoopbackPageIsASecureContextRefusedForItsIPAddress(text: String) {
    // Chromium: http on loopback is a secure context; the call fails with SecurityError "This is an
    // invalid domain.", as an IP address cannot be an RP ID.
    let error = #expect(throws: AuthenticatorError.self) { _ = try Origin(parsing: text) }
    #expect(error?.code == .securityError)
    #expect(error?.message.hasPrefix("This is an invalid domain: origin host") == true, "\(error?.message ?? "")")
    #expect(error?.message.contains("is an IP address, which cannot be an RP ID") == true)
}

@Test(arguments: ["http://10.0.0.1", "http://192.168.1.20:8080", "http://[::2]", "http://128.0.0.1"])
func httpOnAnAddressOffLoopbackIsNotASecureContext(text: String) {
    let error = #expect(throws: AuthenticatorError.self) { _ = try Origin(parsing: text) }
    #expect(error?.message.contains("is not a secure context") == true, "\(error?.message ?? "")")
}

@Test(arguments: ["https://0x7f000001", "https://0x7f.0x0.0x0.0x1"])
func hexadecimalIPv4HostsAreSecurityErrors(text: String) {
    // The URL Standard's IPv4 parser reads a last label like "0x7f000001" as a number, so this
    // host is 127.0.0.1 to a browser and cannot be an RP ID.
    expectAuthenticatorError(.securityError) { try Origin(parsing: text) }
}

@Test func defaultPortIsDroppedAndOthersKept() throws {
    #expect(try Origin(parsing: "https://example.com:443").serialized == "https://example.com")
    #expect(try Origin(parsing: "http://localhost:80").serialized == "http://localhost")
    #expect(try Origin(parsing: "https://example.com:8443").serialized == "https://example.com:8443")
    #expect(try Origin(parsing: "https://example.com:8443").port == 8443)
}

@Test func pathQueryAndFragmentAreDropped() throws {
    #expect(try Origin(parsing: "https://example.com/login?next=%2F#top").serialized == "https://example.com")
    #expect(try Origin(parsing: "https://example.com:444/a/b").serialized == "https://example.com:444")
}

@Test(arguments: [
    ("https://bücher.example", "https://xn--bcher-kva.example"),
    ("https://BÜCHER.Example:8443/x", "https://xn--bcher-kva.example:8443"),
    ("https://faß.de", "https://xn--fa-hia.de"),  // non-transitional, as browsers map it
    ("https://xn--bcher-kva.example", "https://xn--bcher-kva.example"),
    ("https://公司.cn", "https://xn--55qx5d.cn"),
])
func unicodeHostsBecomeALabels(text: String, serialized: String) throws {
    #expect(try Origin(parsing: text).serialized == serialized)
}

@Test(arguments: ["https://xn--a.com", "https://xn--a", "https://a.xn--zz.example", "https://bü\u{00AD}\u{200D}x.example"])
func invalidInternationalizedHostsAreSecurityErrors(text: String) {
    expectAuthenticatorError(.securityError) { try Origin(parsing: text) }
}

@Test func anRPIDIsComparedAsGivenSoOnlyItsALabelsMatchAUnicodeHost() throws {
    #expect(try validateRP("xn--bcher-kva.example", origin: "https://shop.bücher.example") == "xn--bcher-kva.example")
    // Chrome compares the RP ID byte for byte with the origin's (ASCII) host: no IDNA mapping.
    for (rpId, origin) in [("bücher.example", "https://shop.xn--bcher-kva.example"), ("BÜCHER.example", "https://bücher.example"),
                           ("bücher.example", "https://bücher.example")] {
        expectAuthenticatorError(.securityError) { try validateRP(rpId, origin: origin) }
    }
}

@Test func theSystemListKnowsPrivateSuffixes() throws {
    // Debian's list (libpsl): github.io is in the list's private section, which browsers honour.
    #expect(PublicSuffixList.system.isPublicSuffix("github.io"))
    #expect(PublicSuffixList.system.isPublicSuffix("co.uk"))
    #expect(!PublicSuffixList.system.isPublicSuffix("example.co.uk"))
    for (rpId, origin) in [("github.io", "https://alice.github.io"), ("co.uk", "https://shop.example.co.uk")] {
        expectAuthenticatorError(.securityError) {
            try RelyingPartyIdentifier.validate(rpId, for: try Origin(parsing: origin))
        }
    }
    #expect(try RelyingPartyIdentifier.validate("example.co.uk", for: try Origin(parsing: "https://shop.example.co.uk")) == "example.co.uk")
}

// MARK: - RP ID

@Test func missingRPIDDefaultsToTheOriginHost() throws {
    #expect(try validateRP(nil, origin: "https://login.example.com") == "login.example.com")
}

@Test func rpIDEqualToTheHostIsAccepted() throws {
    #expect(try validateRP("login.example.com", origin: "https://login.example.com") == "login.example.com")
}

@Test(arguments: [("Example.COM", "https://example.com"), ("EXAMPLE.com", "https://login.example.com"), ("example.com.", "https://example.com")])
func anRPIDIsNotLowerCasedNorTrimmed(rpId: String, origin: String) {
    expectAuthenticatorError(.securityError) { try validateRP(rpId, origin: origin) }
}

@Test func registrableSuffixOfTheHostIsAccepted() throws {
    #expect(try validateRP("example.com", origin: "https://login.example.com") == "example.com")
    #expect(try validateRP("b.co.uk", origin: "https://a.b.co.uk") == "b.co.uk")
    #expect(try validateRP("example.com", origin: "https://a.b.example.com:8443") == "example.com")
}

@Test(arguments: [
    ("com", "https://example.com"),  // a public suffix
    ("co.uk", "https://a.b.co.uk"),  // a multi-label public suffix
    ("b.ck", "https://a.b.ck"),  // public under the *.ck wildcard
    ("other.com", "https://login.example.com"),  // unrelated
    ("ample.com", "https://example.com"),  // a string suffix but not a domain suffix
    ("login.example.com", "https://example.com"),  // a subdomain of the host, not a suffix
    ("example.com.", "https://login.example.com"),  // not a valid domain
])
func rpIDThatIsNotARegistrableSuffixIsRejected(rpId: String, origin: String) {
    expectAuthenticatorError(.securityError) { try validateRP(rpId, origin: origin) }
}

@Test func wwwCkIsRegistrableThroughTheExceptionRule() throws {
    #expect(try validateRP("www.ck", origin: "https://shop.www.ck") == "www.ck")
}

@Test(arguments: [
    ("example.com", "com"), ("com", "com"), ("a.b.co.uk", "co.uk"), ("co.uk", "co.uk"), ("example.org", "org"),
    ("a.b.ck", "b.ck"), ("b.ck", "b.ck"), ("ck", "ck"), ("www.ck", "ck"), ("a.www.ck", "ck"),
])
func publicSuffixFollowsTheListsRules(domain: String, suffix: String) {
    #expect(testSuffixes.publicSuffix(of: domain) == suffix)
}

@Test func publicSuffixListIgnoresCommentsBlankLinesAndWhatFollowsARule() {
    let list = PublicSuffixList(text: "// example.com is only mentioned\n\nco.uk  trailing words\r\nck\r\n")
    #expect(list.publicSuffix(of: "a.example.com") == "com")
    #expect(list.publicSuffix(of: "x.co.uk") == "co.uk")
    #expect(list.publicSuffix(of: "a.b.ck") == "ck")
}

@Test func publicSuffixRulesInUnicodeMatchTheirPunycodeHosts() {
    // The list writes IDN rules in Unicode; hosts reach it in Punycode (Origin accepts only
    // ASCII). The PSL algorithm compares both canonicalized to Punycode: 公司.cn is xn--55qx5d.cn.
    let list = PublicSuffixList(text: "cn\n公司.cn\n")
    #expect(list.publicSuffix(of: "shop.xn--55qx5d.cn") == "xn--55qx5d.cn")
    expectAuthenticatorError(.securityError) {
        try RelyingPartyIdentifier.validate("xn--55qx5d.cn", for: try Origin(parsing: "https://shop.xn--55qx5d.cn"), suffixes: list)
    }
}

// MARK: - Options JSON

@Test func creationOptionsAreRead() throws {
    let options = try CreationOptions(json: jsonBytes(creationObject {
        $0["excludeCredentials"] = [["type": "public-key", "id": "AAAA"], ["type": "other", "id": "BBBB"]]
        $0["authenticatorSelection"] = ["userVerification": "required", "authenticatorAttachment": "platform"]
        $0["attestation"] = "direct"
        $0["extensions"] = ["credProps": true]
        $0["timeout"] = 60000
    }))
    #expect(options.rpId == "example.com")
    #expect(options.rpName == "Example")
    #expect(options.userId == [1, 2, 3])
    #expect(options.userName == "alice@example.com")
    #expect(options.userDisplayName == "Alice")
    #expect(options.challenge == [0, 1, 2])
    #expect(options.algorithms == [-7])
    #expect(options.excludeCredentials == [[0, 0, 0]])
    #expect(options.userVerification == .required)
    #expect(options.authenticatorAttachment == "platform")
    #expect(options.attestation == .direct)
    #expect(options.credProps)
    #expect(options.timeout == 60000)
}

@Test func creationOptionsAcceptTheWrappedShape() throws {
    let options = try CreationOptions(json: jsonBytes(["publicKey": creationObject()]))
    #expect(options.challenge == [0, 1, 2])
    #expect(options.userId == [1, 2, 3])
}

@Test func requestOptionsAreReadPlainAndWrapped() throws {
    let object = requestObject {
        $0["allowCredentials"] = [["type": "public-key", "id": "AQID"]]
        $0["userVerification"] = "discouraged"
    }
    for json in [jsonBytes(object), jsonBytes(["publicKey": object])] {
        let options = try RequestOptions(json: json)
        #expect(options.rpId == "example.com")
        #expect(options.challenge == [4, 5, 6])
        #expect(options.allowCredentials == [[1, 2, 3]])
        #expect(options.userVerification == .discouraged)
    }
}

@Test func badCreationOptionsAreBadInput() {
    let userId65 = Base64URL.encode([UInt8](repeating: 7, count: 65))
    let cases: [[UInt8]] = [
        Array(#"{"rp": {"#.utf8),  // malformed JSON
        Array("[1, 2]".utf8),  // not an object
        Array("42".utf8),
        jsonBytes(creationObject { $0["challenge"] = nil }),
        jsonBytes(creationObject { $0["user"] = ["id": userId65, "name": "a", "displayName": "A"] }),
        jsonBytes(creationObject { $0["user"] = ["id": "AQID", "name": "a"] }),
        jsonBytes(creationObject { $0["user"] = nil }),
        jsonBytes(creationObject { $0["rp"] = "example.com" }),
        jsonBytes(creationObject { $0["rp"] = ["id": "example.com"] }),
        jsonBytes(creationObject { $0["pubKeyCredParams"] = [["type": "public-key"]] }),
        jsonBytes(creationObject { $0["pubKeyCredParams"] = nil }),
        jsonBytes(["publicKey": "not an object"]),
    ]
    for json in cases {
        expectAuthenticatorError(.badInput) { try CreationOptions(json: json) }
    }
}

@Test func badBase64URLInCreationOptionsIsAnEncodingError() {
    let cases: [[UInt8]] = [
        jsonBytes(creationObject { $0["challenge"] = "AA*C" }),
        jsonBytes(creationObject { $0["challenge"] = "AQID=" }),
        jsonBytes(creationObject { $0["challenge"] = "+/+/" }),
        jsonBytes(creationObject { $0["challenge"] = 5 }),  // ToString: "5", one character
        jsonBytes(creationObject { $0["excludeCredentials"] = [["type": "public-key", "id": "Z"]] }),
        jsonBytes(creationObject { $0["excludeCredentials"] = [["type": "not-a-type", "id": "AQ=="]] }),
    ]
    for json in cases {
        expectAuthenticatorError(.encodingError) { try CreationOptions(json: json) }
    }
    // A TypeError anywhere comes first: conversion precedes decoding.
    expectAuthenticatorError(.badInput) {
        try CreationOptions(json: jsonBytes(creationObject { $0["challenge"] = "AA*C"; $0["hints"] = "client-device" }))
    }
}

@Test func userIdOf64BytesIsAccepted() throws {
    let userId64 = Base64URL.encode([UInt8](repeating: 7, count: 64))
    let options = try CreationOptions(json: jsonBytes(creationObject { $0["user"] = ["id": userId64, "name": "a", "displayName": "A"] }))
    #expect(options.userId.count == 64)
}

@Test func badRequestOptionsAreBadInput() {
    let cases: [[UInt8]] = [
        Array("{".utf8),
        Array(#"["challenge"]"#.utf8),
        jsonBytes(requestObject { $0["challenge"] = nil }),
        jsonBytes(requestObject { $0["allowCredentials"] = "AQID" }),
        jsonBytes(requestObject { $0["allowCredentials"] = [["type": "public-key"]] }),
        jsonBytes(requestObject { $0["hints"] = "security-key" }),
    ]
    for json in cases {
        expectAuthenticatorError(.badInput) { try RequestOptions(json: json) }
    }
    for json in [jsonBytes(requestObject { $0["challenge"] = "A" }),
                 jsonBytes(requestObject { $0["allowCredentials"] = [["type": "public-key", "id": "%%"]] })] {
        expectAuthenticatorError(.encodingError) { try RequestOptions(json: json) }
    }
}

@Test func emptyPubKeyCredParamsMeanES256AndRS256() throws {
    #expect(try CreationOptions(json: jsonBytes(creationObject { $0["pubKeyCredParams"] = [Any]() })).algorithms == [-7, -257])
}

@Test func pubKeyCredParamsKeepOrderAndSkipUnknownTypes() throws {
    let options = try CreationOptions(json: jsonBytes(creationObject {
        $0["pubKeyCredParams"] = [["type": "public-key", "alg": -257], ["type": "future", "alg": -8],
                                  ["type": "public-key", "alg": -7]]
    }))
    #expect(options.algorithms == [-257, -7])
}

@Test func unknownAttestationConveyanceMeansNone() throws {
    let options = try CreationOptions(json: jsonBytes(creationObject { $0["attestation"] = "everything" }))
    #expect(options.attestation == .none)
    #expect(AuthenticatorProfile.authctl.format(for: options.attestation) == .none)
    #expect(try CreationOptions(json: jsonBytes(creationObject())).attestation == .none)
}

@Test func unknownUserVerificationMeansPreferred() throws {
    let options = try CreationOptions(json: jsonBytes(creationObject { $0["authenticatorSelection"] = ["userVerification": "always"] }))
    #expect(options.userVerification == .preferred)
    #expect(try RequestOptions(json: jsonBytes(requestObject())).userVerification == .preferred)
}
