import Foundation
import Testing
@testable import VirtualAuthenticator

/// A JSON value as `JSON.parse` makes it (any JSON text, not only objects).
private func value(_ json: String) -> Any {
    try! JSONSerialization.jsonObject(with: Data(json.utf8), options: [.fragmentsAllowed])
}

// MARK: - DOMString, boolean, unsigned long, long: every JSON kind, one row each

/// JSON value → (DOMString, boolean, unsigned long, long), as a browser converts it.
private let primitiveConversions: [(json: String, string: String, boolean: Bool, unsignedLong: UInt32, long: Int32)] = [
    (#""abc""#, "abc", true, 0, 0),  // NaN
    (#""""#, "", false, 0, 0),
    (#""false""#, "false", true, 0, 0),  // a non-empty string is true
    (#""1000""#, "1000", true, 1000, 1000),
    (#"" 12\n""#, " 12\n", true, 12, 12),  // StringToNumber trims white space
    (#""0x10""#, "0x10", true, 16, 16),
    (#""-0x10""#, "-0x10", true, 0, 0),  // no sign on a hex literal: NaN
    ("\"0x\u{FF13}a98\"", "0x\u{FF13}a98", true, 0, 0),  // a fullwidth digit is no hex digit to JS: NaN
    (#""1e3""#, "1e3", true, 1000, 1000),
    (#"".5""#, ".5", true, 0, 0),
    (#""Infinity""#, "Infinity", true, 0, 0),
    (#""12px""#, "12px", true, 0, 0),
    ("5", "5", true, 5, 5),
    ("1.5", "1.5", true, 1, 1),  // truncated
    ("-1", "-1", true, 4_294_967_295, -1),  // modulo 2^32
    ("-1.9", "-1.9", true, 4_294_967_295, -1),
    ("0", "0", false, 0, 0),
    ("-0", "0", false, 0, 0),
    ("4294967296", "4294967296", true, 0, 0),
    ("4294967297", "4294967297", true, 1, 1),
    ("2147483648", "2147483648", true, 2_147_483_648, -2_147_483_648),
    ("9300000000000000", "9300000000000000", true, 4_234_756_096, -60_211_200),
    ("1e21", "1e+21", true, 3_735_027_712, -559_939_584),
    ("123456789012345680000", "123456789012345680000", true, 792_100_864, 792_100_864),
    ("0.000001", "0.000001", true, 0, 0),
    ("1e-7", "1e-7", true, 0, 0),
    ("true", "true", true, 1, 1),
    ("false", "false", false, 0, 0),
    ("null", "null", false, 0, 0),
    ("[]", "", true, 0, 0),  // ToPrimitive: "" → 0
    ("[7]", "7", true, 7, 7),
    (#"[1,[2,3],null,"a"]"#, "1,2,3,,a", true, 0, 0),
    ("{}", "[object Object]", true, 0, 0),
    (#"{"a":1}"#, "[object Object]", true, 0, 0),
]

@Test(arguments: primitiveConversions.indices)
func primitiveConversionsFollowWebIDL(row: Int) {
    let c = primitiveConversions[row]
    let v = value(c.json)
    #expect(WebIDL.domString(v) == c.string, "DOMString of \(c.json)")
    #expect(WebIDL.boolean(v) == c.boolean, "boolean of \(c.json)")
    #expect(WebIDL.unsignedLong(v) == c.unsignedLong, "unsigned long of \(c.json)")
    #expect(WebIDL.long(v) == c.long, "long of \(c.json)")
}

@Test(arguments: [(0.1, "0.1"), (100.0, "100"), (1e20, "100000000000000000000"), (1.5e-6, "0.0000015"),
                  (1.2345e-7, "1.2345e-7"), (-2.5e30, "-2.5e+30"), (Double.nan, "NaN"), (-Double.infinity, "-Infinity")])
func numbersAreWrittenAsJavaScriptDoes(number: Double, text: String) {
    #expect(WebIDL.numberToString(number) == text)
}

// MARK: - Enumerations, sequences, dictionaries, records

@Test func enumerationsIgnoreUnknownValues() {
    #expect(WebIDL.enumeration(value(#""direct""#), as: AttestationConveyance.self) == .direct)
    #expect(WebIDL.enumeration(value(#""DIRECT""#), as: AttestationConveyance.self) == nil)
    #expect(WebIDL.enumeration(value("5"), as: AttestationConveyance.self) == nil)
}

/// JSON value → whether it converts as a sequence, a dictionary, a record.
private let compoundConversions: [(json: String, sequence: Bool, dictionary: Bool, record: Bool)] = [
    ("[]", true, true, true),  // an Array is an Object: an empty dictionary, a record of its indices
    (#"["a"]"#, true, true, true),
    ("{}", false, true, true),  // a plain object has no @@iterator
    ("null", false, true, false),  // null is the empty dictionary
    (#""abc""#, false, false, false),  // a string is no Object
    ("5", false, false, false),
    ("true", false, false, false),
]

@Test(arguments: compoundConversions.indices)
func compoundConversionsFollowWebIDL(row: Int) {
    let c = compoundConversions[row]
    let v = value(c.json)
    #expect(((try? WebIDL.sequence(v, path: "x")) != nil) == c.sequence, "sequence of \(c.json)")
    #expect(((try? WebIDL.dictionary(v, path: "x")) != nil) == c.dictionary, "dictionary of \(c.json)")
    #expect(((try? WebIDL.record(v, path: "x")) != nil) == c.record, "record of \(c.json)")
    // Every refusal is a TypeError (badInput).
    if !c.sequence { expectAuthenticatorError(.badInput) { try WebIDL.sequence(v, path: "x") } }
    if !c.dictionary { expectAuthenticatorError(.badInput) { try WebIDL.dictionary(v, path: "x") } }
    if !c.record { expectAuthenticatorError(.badInput) { try WebIDL.record(v, path: "x") } }
}

// MARK: - Required and null members, in the options

@Test(arguments: ["rp", "user", "challenge", "pubKeyCredParams"])
func aMissingRequiredCreationMemberIsATypeError(member: String) {
    expectAuthenticatorError(.badInput) { try CreationOptions(json: jsonBytes(creationObject { $0[member] = nil })) }
}

@Test(arguments: [("rp", "name"), ("user", "name"), ("user", "displayName"), ("user", "id")])
func aMissingRequiredEntityMemberIsATypeError(entity: String, member: String) {
    expectAuthenticatorError(.badInput) {
        try CreationOptions(json: jsonBytes(creationObject {
            var inner = $0[entity] as! [String: Any]
            inner[member] = nil
            $0[entity] = inner
        }))
    }
}

@Test func aMissingRequestChallengeIsATypeError() {
    expectAuthenticatorError(.badInput) { try RequestOptions(json: jsonBytes(requestObject { $0["challenge"] = nil })) }
}

@Test func nullIsConvertedNotIgnored() throws {
    // A dictionary member given null is the empty dictionary: rp {} lacks its required name.
    expectAuthenticatorError(.badInput) { try CreationOptions(json: jsonBytes(creationObject { $0["rp"] = NSNull() })) }
    expectAuthenticatorError(.badInput) { try CreationOptions(json: jsonBytes(creationObject { $0["user"] = NSNull() })) }
    // A sequence member given null is a TypeError.
    for member in ["pubKeyCredParams", "excludeCredentials", "hints", "attestationFormats"] {
        expectAuthenticatorError(.badInput) { try CreationOptions(json: jsonBytes(creationObject { $0[member] = NSNull() })) }
    }
    expectAuthenticatorError(.badInput) { try RequestOptions(json: jsonBytes(requestObject { $0["allowCredentials"] = NSNull() })) }
    // A DOMString member given null is the string "null" (no member of these dictionaries is nullable).
    let named = try CreationOptions(json: jsonBytes(creationObject { $0["rp"] = ["id": NSNull(), "name": NSNull()] }))
    #expect(named.rpId == "null" && named.rpName == "null")
    let user = try CreationOptions(json: jsonBytes(creationObject { $0["user"] = ["id": NSNull(), "name": NSNull(), "displayName": 5] }))
    #expect(user.userId == Base64URL.decode("null") && user.userName == "null" && user.userDisplayName == "5")
    // Optional dictionaries given null are empty: defaults apply.
    let defaults = try CreationOptions(json: jsonBytes(creationObject {
        $0["authenticatorSelection"] = NSNull(); $0["extensions"] = NSNull(); $0["attestation"] = NSNull()
    }))
    #expect(defaults.userVerification == .preferred && defaults.attestation == .none && !defaults.credProps)
}

@Test func mistypedMembersConvertAsABrowserConvertsThem() throws {
    let options = try CreationOptions(json: jsonBytes(creationObject {
        $0["rp"] = ["id": "example.com", "name": 5]
        $0["authenticatorSelection"] = ["requireResidentKey": "no", "userVerification": 7, "residentKey": ["required"]]
        $0["pubKeyCredParams"] = [["type": "public-key", "alg": "-7"], ["type": 3, "alg": -257], ["type": "public-key", "alg": -8.9]]
        $0["extensions"] = ["credProps": 1]
        $0["timeout"] = "1000"
    }))
    #expect(options.rpName == "5")
    #expect(options.requireResidentKey)  // ToBoolean("no") is true
    #expect(options.residentKey == "required")  // ToString(["required"])
    #expect(options.userVerification == .preferred)  // "7" is no UserVerificationRequirement
    #expect(options.algorithms == [-7, -8])  // the entry of type "3" is skipped; -8.9 truncates
    #expect(options.credProps)
    #expect(options.timeout == 10_000)  // 1000, raised to Chrome's minimum
}

@Test func anEntryOfAnUnknownTypeStillNeedsItsRequiredMembers() {
    expectAuthenticatorError(.badInput) {
        try CreationOptions(json: jsonBytes(creationObject { $0["pubKeyCredParams"] = [["type": "future"]] }))
    }
    expectAuthenticatorError(.badInput) {
        try RequestOptions(json: jsonBytes(requestObject { $0["allowCredentials"] = [["id": "AQID"]] }))
    }
    expectAuthenticatorError(.badInput) {
        try RequestOptions(json: jsonBytes(requestObject { $0["allowCredentials"] = [["type": "public-key", "id": "AQID", "transports": "usb"]] }))
    }
    expectAuthenticatorError(.encodingError) {
        try RequestOptions(json: jsonBytes(requestObject { $0["allowCredentials"] = [["type": "future", "id": "AQ/D"]] }))
    }
}

@Test(arguments: [
    ("1.5", 10_000), (#""1000""#, 10_000), ("4294967296", 10_000), ("-1", 600_000), (#""NaN""#, 10_000),
    ("true", 10_000), ("null", 10_000), ("30000", 30_000), ("600001", 600_000), ("9300000000000000", 600_000),
    (#""45000""#, 45_000), ("[20000]", 20_000),
])
func timeoutsAreUnsignedLongsClampedToTenSecondsAndTenMinutes(json: String, effective: Int) throws {
    let text = #"{"challenge":"AQID","timeout":"# + json + "}"
    #expect(try RequestOptions(json: Array(text.utf8)).timeout == effective)
}

@Test func anAbsentTimeoutLeavesTheDefault() throws {
    #expect(try RequestOptions(json: jsonBytes(requestObject())).timeout == nil)
}

@Test(arguments: ["AQID=", "AQ+D", "AQ/D", "AQ D", " AQID", "AQ\nID", "AQ==", "A", "AQI\u{00E9}"])
func strictBase64URLRefusesPaddingOtherAlphabetsAndSpace(text: String) {
    #expect(Base64URL.decodeStrict(text) == nil)
    expectAuthenticatorError(.encodingError) { try RequestOptions(json: jsonBytes(requestObject { $0["challenge"] = text })) }
}

@Test func extensionBinaryInputsAreStrictToo() {
    let cases: [[String: Any]] = [
        ["credBlob": "AQ=="], ["prf": ["eval": ["first": "AQ+D"]]], ["prf": ["eval": ["first": "AQID", "second": "A"]]],
    ]
    for extensions in cases {
        expectAuthenticatorError(.encodingError) { try CreationOptions(json: jsonBytes(creationObject { $0["extensions"] = extensions })) }
    }
    expectAuthenticatorError(.encodingError) {
        try RequestOptions(json: jsonBytes(requestObject { $0["extensions"] = ["largeBlob": ["write": "AQ/D"]] }))
    }
    expectAuthenticatorError(.encodingError) {
        try RequestOptions(json: jsonBytes(requestObject { $0["extensions"] = ["prf": ["evalByCredential": ["AQID": ["first": "AQ="]]]] }))
    }
    // A record must be an object; PRF's `first` is required.
    expectAuthenticatorError(.badInput) {
        try RequestOptions(json: jsonBytes(requestObject { $0["extensions"] = ["prf": ["evalByCredential": "AQID"]] }))
    }
    expectAuthenticatorError(.badInput) {
        try RequestOptions(json: jsonBytes(requestObject { $0["extensions"] = ["prf": ["eval": ["second": "AQID"]]] }))
    }
}
