import Foundation
import Session
import Testing
@testable import Server
import TestSupport

/// The service's routes in-process (no socket): the token, accounts, a ceremony's outcome as a
/// problem, and the HTTP status of every row of the error table.
final class AccountServiceTests {
    let directory: TemporaryDirectory
    var scratch: String { directory.path }
    let service: AccountService

    init() throws {
        directory = try TemporaryDirectory("authctl-server-test")
        service = AccountService(token: "secret-token", scratch: directory.path)
    }

    deinit { service.close() }

    func call(_ method: String, _ path: String, _ body: String = "", token: String? = "secret-token") -> (Int, [String: Any]) {
        let response = service.handle(HTTPRequest(method: method, path: path, authorization: token.map { "Bearer \($0)" },
                                                  body: Array(body.utf8), bodyTooLarge: false))
        let object = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
        return (response.status, object)
    }

    @Test func theTokenIsRequiredButForHealth() {
        #expect(call("GET", "/health", token: nil).0 == 200)
        #expect(call("POST", "/accounts", token: nil).0 == 401)
        #expect(call("POST", "/accounts", token: "secret-tokem").0 == 401)
        #expect(call("POST", "/accounts", token: "secret-token-longer").0 == 401)
        #expect(call("POST", "/accounts").0 == 201)
    }

    @Test func aSignInWithoutAPasskeyIsAProblemWithTheTablesRow() throws {
        let (status, account) = call("POST", "/accounts", #"{"devices":[{"name":"phone","pin":"1234"},{"name":"laptop"}]}"#)
        #expect(status == 201)
        let id = try #require(account["id"] as? String)
        #expect((account["devices"] as? [[String: Any]])?.map { $0["name"] as? String } == ["phone", "laptop"])
        let (signStatus, problem) = call("POST", "/accounts/\(id)/devices/phone/sign",
                                         #"{"options":{"challenge":"Y2hhbGxlbmdlY2hhbGxlbmdl","rpId":"example.com"},"origin":"https://example.com"}"#)
        #expect(signStatus == 422)
        #expect(problem["name"] as? String == "notHandled")
        #expect(problem["domException"] as? String == "NotAllowedError")
        #expect(call("POST", "/accounts/\(id)/devices/phone/sign", "[1]").0 == 400)
        #expect(call("DELETE", "/accounts/\(id)").0 == 204)
        #expect(call("POST", "/accounts/\(id)/devices/phone/sign", "{}").0 == 404)
    }

    @Test func aStoreThatCannotBeUsedIsTheRequestsProblemAndLeavesNothing() throws {
        // Others can write it; a symbolic link; a file's child; a server nothing listens on.
        let open = scratch + "/open"
        #expect(mkdir(open, 0o777) == 0 && chmod(open, 0o777) == 0)
        #expect(mkdir(scratch + "/empty", 0o700) == 0 && symlink(scratch + "/empty", scratch + "/link") == 0)
        #expect(FileManager.default.createFile(atPath: scratch + "/file", contents: Data()))
        let before = try FileManager.default.contentsOfDirectory(atPath: scratch).sorted()
        for store in [open, scratch + "/link", scratch + "/file/store", "postgresql://authctl@127.0.0.1:1/keys#alice"] {
            let (status, problem) = call("POST", "/accounts", #"{"store":"\#(store)"}"#)
            #expect(status == 422 && problem["name"] as? String == "storeUnavailable", "\(store): \(status) \(problem)")
            #expect(problem["detail"] as? String != nil && problem["ctapStatus"] as? Int == 0x7F, "\(store)")
        }
        // No account's directory left in the scratch space.
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).sorted() == before)
    }

    @Test func everyRowOfTheTableHasAStatusAndNoCeremonyOutcomeIsA5xx() {
        let outcomes: Set<SessionError.Name> = [.canceled, .failed, .invalidResponse, .notHandled, .notInteractive, .matchedExcludedCredential,
                                                .biometryLockout, .timedOut, .securityError, .notSupported, .passkeysNotSupported]
        for name in SessionError.Name.allCases {
            let status = AccountService.status(of: name)
            #expect((400..<600).contains(status))
            if outcomes.contains(name) { #expect(status == 422, "\(name)") }
        }
    }
}

/// The contract's own shape (ContractTests holds it to the routes and their bodies).
@Suite struct OpenAPIContractTests {
    @Test func everyOperationIsNamedAndAnswersItsFailuresAsProblems() throws {
        let document = try #require(try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.bytes)) as? [String: Any])
        #expect(document["openapi"] as? String == "3.1.0")
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        // Every operation answers its failures as problems, and names its operation.
        for (_, operations) in paths {
            for (_, operation) in operations {
                let operation = try #require(operation as? [String: Any])
                #expect(operation["operationId"] is String)
                #expect((operation["responses"] as? [String: Any])?["default"] != nil)
            }
        }
    }
}

/// A body read once: JSON as RFC 8259 has it (and as Foundation's reader took it), a name
/// repeated found with the way to it, a member's value as sent.
@Suite struct RequestBodyReaderTests {
    func refusal(_ text: String) -> String? { refusal(Array(text.utf8)) }
    func refusal(_ bytes: [UInt8]) -> String? {
        do { _ = try RequestBody(bytes) } catch { return "\(error.name.text): \(error.detail)" }
        return nil
    }

    @Test func findsTheValueAsSent() throws {
        let body = try RequestBody(Array(#" { "origin" : "https://x/{" , "options": {"a": ["}", {"b": "\"]"}], "n": -1.5e3, "t": true}, "pin": null } "#.utf8))
        #expect(body.root.member("options").map { String(decoding: $0.text, as: UTF8.self) } == #"{"a": ["}", {"b": "\"]"}], "n": -1.5e3, "t": true}"#)
        #expect(body.root.member("origin")?.string == "https://x/{")
        #expect(body.root.member("pin")?.isNull == true)
        #expect(body.root.member("absent") == nil)
        #expect(body.root.names == ["origin", "options", "pin"])
        let escaped = try RequestBody(Array(#"{"opt\u0069ons": {"a": "\u00e9\ud83d\ude00\n\/"}}"#.utf8))
        #expect(escaped.root.names == ["options"])
        #expect(escaped.root.member("options")?.member("a")?.string == "é😀\n/")
        #expect(try RequestBody(Array("\u{FEFF}{\"a\": [1, 2.5e1, -0, 1.0, true, false]}".utf8)).root.member("a")?.elements.map { $0.wholeNumber(maximum: 100) }
                == [1, 25, 0, 1, nil, nil])
        #expect(try RequestBody(Array(#"{"a": 18446744073709551615, "b": 18446744073709551616, "c": 0.5}"#.utf8)).root.names.count == 3)
    }

    @Test func whatIsNotJSONOrNotAnObjectIsRefusedAsFoundationRefusedIt() {
        for text in ["{not json", "{\"a\":01}", "{\"a\":1.}", "{\"a\":-}", "{\"a\":+1}", "{\"a\":1e400}", "{\"a\":\"\t\"}", "{\"a\":\"\\x\"}",
                     "{\"a\":\"\\U0041\"}", "{\"a\":\"\\ude00\"}", "{\"a\":\"\\ud800x\"}", "{\"a\":truex}", "{\"a\":1} x", "{\"a\":1}\u{0B}",
                     "{\"a\" 1}", "{\"a\":1,,}", "{\"a\":[,]}", "{,}", "{\"a\":1}\u{0}",
                     String(repeating: "[", count: 513) + String(repeating: "]", count: 513)] {
            #expect(refusal(text) == "syntaxError: the body is not JSON", "\(text.prefix(40))")
        }
        #expect(refusal([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x7D]) == "syntaxError: the body is not JSON")
        #expect(refusal([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xC3, 0x28, 0x22, 0x7D]) == "syntaxError: the body is not JSON")
        for text in ["[]", "42", "\"text\"", "null", "[{\"a\": 1, \"a\": 2}]", String(repeating: "[", count: 512) + String(repeating: "]", count: 512)] {
            #expect(refusal(text) == "badInput: the body is not a JSON object", "\(text.prefix(40))")
        }
        #expect(refusal("{\"a\": \"\u{7F}\\u0000\", \"b\": 1E+2}") == nil)
        #expect(refusal("{\"a\": [1 , ], \"b\": {\"c\": 1,},\n}") == nil)  // Foundation's trailing commas
        #expect(refusal("  ") == nil)
        // A name repeated in a body that is not JSON after all: not JSON.
        #expect(refusal(#"{"a": 1, "a": 2"#) == "syntaxError: the body is not JSON")
    }

    @Test func aRepeatedNameIsFoundWithTheWayToIt() {
        func repeated(_ text: String) -> String? {
            guard let refused = refusal(text) else { return nil }
            return refused.firstMatch(of: /the member '(.*)' more than once/).map { String($0.1) } ?? refused
        }
        #expect(repeated(#"{"a": 1, "b": {"a": 2}, "c": [{"a": 3}, {"a": 4}]}"#) == nil)
        #expect(repeated(#"{"a": 1, "a": 1}"#) == "a")
        #expect(repeated(#"{"a": "\"a\"", "b": [[], [{"x": {}, "y": [1, {"z": 0, "z": 0}]}]]}"#) == "b[1][0].y[1].z")
        #expect(repeated(#"{"\u0061": 1, "a": 2}"#) == "a")
        #expect(repeated(#"{"a": {"b": 1}, "c": {"b": 2}, "a": 3}"#) == "a")
        // Past 16 members the names are held in a set: the same answers.
        let many = (0..<40).map { "\"m\($0)\": \($0)" }.joined(separator: ", ")
        #expect(repeated("{\(many)}") == nil)
        #expect(repeated("{\(many), \"m\\u0033\": 1}") == "m3")
        #expect(repeated("{\"x\": {\(many), \"m39\": 1}}") == "x.m39")
    }

    @Test func aByteOrderMarkThatBeginsAStringOrFollowsAnEscapeIsDroppedAsFoundationDroppedIt() throws {
        // Foundation's reader drops a U+FEFF sent as such (not as `\ufeff`) at the start of a
        // string's text and after each escape, once; the authenticator reads the options with it.
        let body = try RequestBody(Array("{\"a\": [\"\u{FEFF}x\", \"x\u{FEFF}y\", \"\\n\u{FEFF}y\", \"\u{FEFF}\u{FEFF}y\", \"\\ufeffy\", \"\u{FEFF}\", \"\\ud83d\\ude00\u{FEFF}\"], \"\u{FEFF}b\": 1}".utf8))
        #expect(body.root.member("a")?.elements.map(\.string) == ["x", "x\u{FEFF}y", "\ny", "\u{FEFF}y", "\u{FEFF}y", "", "😀"])
        #expect(body.root.names == ["a", "b"])
        #expect(body.root.member("b") != nil)
        #expect(refusal("{\"a\": 1, \"\u{FEFF}a\": 2}") == "badInput: the body has the member 'a' more than once")
        #expect(refusal("{\"options\": {\"challenge\": \"Y2g\", \"\u{FEFF}challenge\": \"b3RoZXI\"}, \"origin\": \"https://x\"}")
                == "badInput: the body has the member 'options.challenge' more than once")
        #expect(refusal("{\"\u{FEFF}\": 1, \"\": 2}") == "badInput: the body has the member '' more than once")
        #expect(refusal("{\"\\ufeff\": 1, \"\": 2}") == nil)
    }

    @Test func namesThatAreOneStringByCanonicalEquivalenceAreOneName() throws {
        // The options are read into dictionaries keyed by Swift's strings, where `"e\u0301"` is
        // `"é"` and the Kelvin sign is `K`: two such names are one name given twice.
        #expect(refusal(#"{"é": 1, "e\u0301": 2}"#) == "badInput: the body has the member 'é' more than once")
        #expect(refusal("{\"options\": {\"pubKeyCredParams\": [], \"pub\u{212A}eyCredParams\": []}, \"origin\": \"https://x\"}")
                == "badInput: the body has the member 'options.pub\u{212A}eyCredParams' more than once")
        let many = (0..<40).map { "\"m\($0)\": \($0)" }.joined(separator: ", ")
        #expect(refusal("{\(many), \"\u{212A}\": 1, \"K\": 2}") == "badInput: the body has the member 'K' more than once")
        // (The second name is the one named: by its code points, as Swift's `==` would not tell.)
        #expect(refusal(#"{"Å": 1, "\u212B": 2, "\u00c5": 3}"#).map { Array($0.unicodeScalars) }
                == Array("badInput: the body has the member '\u{212B}' more than once".unicodeScalars))
        // A member is found by any spelling of its name, as Foundation's dictionary found it.
        let body = try RequestBody(Array("{\"private\u{212A}ey\": \"x\", \"r\\u0070Id\": \"y\"}".utf8))
        #expect(body.root.member("privateKey")?.string == "x")
        #expect(body.root.member("rpId")?.string == "y")
        #expect(body.root.member("\u{212A}") == nil)
        #expect(try RequestBody(Array("{\"K\": 1}".utf8)).root.member("\u{212A}") != nil)
    }

    @Test func aWholeNumberPastEveryMaximumIsNone() throws {
        let body = try RequestBody(Array(#"{"a": [18446744073709551616.0, 1.8446744073709552e19, 18446744073709551615, 1e19]}"#.utf8))
        #expect(body.root.member("a")?.elements.map { $0.wholeNumber(maximum: .max) } == [nil, nil, .max, 10_000_000_000_000_000_000])
    }

    @Test func aWholeNumberIsReadExactlyAsWritten() throws {
        // Its exact value from its digits: a double would round one past 2^53 to another
        // (`9007199254740993.0` to …992), and make a fraction too small for it whole (`1e-400`).
        let texts = ["9007199254740993.0", "0.9007199254740993e16", "90071992547409930e-1", "9223372036854775807.0", "12345678901234567.0",
                     "1e-400", "0.99999999999999999999", "1.00000000000000000001", "0e-400", "-0.0", "-0e9", "-1e-400", "0.0e99999999999999999999",
                     "100000000000000000000e-1", "1e20", "25e-1", "2500e-2", "1E+2"]
        let body = try RequestBody(Array("{\"a\": [\(texts.joined(separator: ", "))]}".utf8))
        #expect(body.root.member("a")?.elements.map { $0.wholeNumber(maximum: .max) }
                == [9007199254740993, 9007199254740993, 9007199254740993, 9223372036854775807, 12345678901234567,
                    nil, nil, nil, 0, 0, 0, nil, 0, 10_000_000_000_000_000_000, nil, nil, 25, 100])
        #expect(body.root.member("a")?.elements[3].wholeNumber(maximum: UInt64(Int64.max)) == 9223372036854775807)
    }

    @Test func aBodyOfManyMembersIsReadInTimeInProportionToIt() throws {
        // Each name is checked against the object's others by a set past 16: a copy of the
        // reader's state taken for each name once made every insert copy the set (23 s here in a
        // debug build; 0.3 s now). A deadline for a hang, not a measure of speed: benchmarks are
        // for that, and the deadline holds some fifty times over on a loaded machine.
        let members = (0..<60_000).map { "\"m\($0)\":0" }.joined(separator: ",")
        let escaped = (0..<30_000).map { "\"\\u006d\($0)\":0" }.joined(separator: ",")
        for text in ["{\(members)}", "{\"a\": {\(escaped)}}"] {
            let start = ContinuousClock.now
            _ = try RequestBody(Array(text.utf8))
            #expect(ContinuousClock.now - start < .seconds(15), "\(text.prefix(30))")
        }
    }

    @Test func aCeremonyReadsTheOptionsAsSent() throws {
        let body = try Body.Ceremony.decode(Array(#"{"options": {"challenge": "Y2g", "rpId": "example.com"}, "origin": "https://example.com"}"#.utf8))
        #expect(String(decoding: body.options.bytes, as: UTF8.self) == #"{"challenge": "Y2g", "rpId": "example.com"}"#)
    }
}

/// The body reader against Foundation's, which the server read bodies with before: over random
/// JSON documents written with random spacing and escapes, then cut, spliced and sprinkled with
/// bytes JSON treats specially, both accept the same bodies and read the same values; the reader
/// refuses a repeated name where Foundation kept the last one silently.
@Suite struct RequestBodyDifferentialTests {
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    }

    static let names = ["a", "b", "options", "origin", "é", "e\u{301}", "😀", "", "\u{FEFF}a", "K", "\u{212A}"]
    static let strings = ["", "x", "https://example.com", "quote\"back\\slash", "tab\tnew\nline", "\u{7F}\u{0}", "é😀", "/", "{[]}", "\u{FEFF}\u{FEFF}x\n\u{FEFF}"]

    func value(_ r: inout Random, depth: Int) -> String {
        func space() -> String { ["", " ", "\n", "\t ", "\r\n"][r.below(5)] }
        func string(_ text: String) -> String {
            var out = "\""
            for scalar in text.unicodeScalars {
                switch (scalar, r.below(3)) {
                case ("\"", _): out += "\\\""
                case ("\\", _): out += "\\\\"
                case (_, 0) where scalar.value < 0x10000: out += String(format: "\\u%04x", scalar.value)
                case (_, 0): let v = scalar.value - 0x10000; out += String(format: "\\u%04X\\u%04X", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF))
                case (_, _) where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
                case ("/", 1): out += "\\/"
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out + "\""
        }
        switch depth > 3 ? r.below(4) : r.below(6) {
        case 0: return string(Self.strings[r.below(Self.strings.count)])
        case 1: return ["0", "-0", "12", "1.5", "-2e3", "1E+2", "9007199254740993", "0.000001", "1e-400"][r.below(9)]
        case 2: return ["true", "false", "null"][r.below(3)]
        case 3: return string(String(r.below(1000)))
        case 4:
            let count = r.below(4)
            return "[" + (0..<count).map { _ in space() + value(&r, depth: depth + 1) + space() }.joined(separator: ",") + "]"
        default:
            let count = r.below(20) == 0 ? 18 + r.below(4) : r.below(4)
            let members = (0..<count).map { i in
                space() + string(r.below(4) == 0 ? Self.names[r.below(Self.names.count)] : "m\(i)") + space() + ":" + space() + value(&r, depth: depth + 1)
            }
            return "{" + members.joined(separator: ",") + space() + "}"
        }
    }

    func document(_ r: inout Random) -> [UInt8] {
        var bytes = Array(("{" + "\"o\": " + value(&r, depth: 0) + "}").utf8)
        if r.below(3) == 0 {
            let bad: [UInt8] = [0x22, 0x5C, 0x7B, 0x7D, 0x5B, 0x5D, 0x2C, 0x3A, 0x00, 0x09, 0x0B, 0xFF, 0xC3, 0x80, 0x2D, 0x2E, 0x30, 0x65, 0x75]
            for _ in 0...r.below(3) {
                switch r.below(3) {
                case 0 where !bytes.isEmpty: bytes.remove(at: r.below(bytes.count))
                case 1: bytes.insert(bad[r.below(bad.count)], at: r.below(bytes.count + 1))
                default: bytes = Array(bytes.prefix(r.below(bytes.count + 1)))
                }
            }
        }
        return bytes
    }

    /// A value as Foundation's objects, for comparison.
    func foundation(_ node: BodyNode) -> NSObject {
        switch node.kind {
        case .object: NSDictionary(dictionary: Dictionary(uniqueKeysWithValues: zip(node.names, node.names.map { foundation(node.member($0)!) })))
        case .array: NSArray(array: node.elements.map(foundation))
        case .string: NSString(string: node.string!)
        case .number: NSNumber(value: Double(String(decoding: node.text, as: UTF8.self))!)
        case .true: NSNumber(value: true)
        case .false: NSNumber(value: false)
        case .null: NSNull()
        }
    }

    @Test func acceptsAndReadsWhatFoundationDidAndRefusesWhatItRefused() throws {
        var r = Random(state: 20261207)
        var (accepted, repeated, refused) = (0, 0, 0)
        for _ in 0..<20000 {
            let bytes = document(&r)
            // As the server read bodies before: white space alone is `{}`; UTF-8 only, no NUL.
            let theirs = bytes.allSatisfy({ [0x20, 0x0A, 0x0D, 0x09].contains($0) }) ? NSDictionary()
                : bytes.contains(0) || String(validating: bytes, as: UTF8.self) == nil ? nil
                : (try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])) as? NSDictionary
            do {
                let body = try RequestBody(bytes)
                accepted += 1
                guard let theirs else {
                    Issue.record("accepted what Foundation refused: \(String(decoding: bytes, as: UTF8.self))")
                    continue
                }
                #expect(foundation(body.root) == theirs, "\(String(decoding: bytes, as: UTF8.self))")
            } catch where error.detail.hasSuffix("more than once") {
                repeated += 1
                #expect(theirs != nil, "a repeated name in what Foundation refused: \(String(decoding: bytes, as: UTF8.self))")
            } catch {
                refused += 1
                #expect(theirs == nil, "refused what Foundation read (\(error.detail)): \(String(decoding: bytes, as: UTF8.self).debugDescription)")
            }
        }
        // Each kind of answer is met many times.
        #expect(accepted > 5000 && repeated > 150 && refused > 2000, "\(accepted) \(repeated) \(refused)")
    }
}
