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

/// A member's value found in the body as sent: strings with braces and escaped quotes skipped,
/// the last of a repeated name kept (as JSONSerialization keeps it), an escaped name declined.
@Suite struct RawJSONTests {
    func member(_ key: String, _ text: String) -> String? {
        let bytes = Array(text.utf8)
        return RawJSON.lastMember(key, in: bytes).map { String(decoding: bytes[$0], as: UTF8.self) }
    }

    @Test func findsTheValueAsSent() {
        let body = #" { "origin" : "https://x/{" , "options": {"a": ["}", {"b": "\"]"}], "n": -1.5e3, "t": true}, "pin": null } "#
        #expect(member("options", body) == #"{"a": ["}", {"b": "\"]"}], "n": -1.5e3, "t": true}"#)
        #expect(member("origin", body) == #""https://x/{""#)
        #expect(member("pin", body) == "null")
        #expect(member("absent", body) == nil)
        #expect(member("options", #"{"options": {"a": 1}, "options": {"b": 2}}"#) == #"{"b": 2}"#)
        #expect(member("options", #"{"opt\u0069ons": {"a": 1}}"#) == nil)
        #expect(member("options", "[1, 2]") == nil)
    }

    @Test func aRepeatedNameIsFoundWithTheWayToIt() {
        func repeated(_ text: String) -> String? { RawJSON.repeatedMember(in: Array(text.utf8)) }
        #expect(repeated(#"{"a": 1, "b": {"a": 2}, "c": [{"a": 3}, {"a": 4}]}"#) == nil)
        #expect(repeated(#"{"a": 1, "a": 1}"#) == "a")
        #expect(repeated(#"{"a": "\"a\"", "b": [[], [{"x": {}, "y": [1, {"z": 0, "z": 0}]}]]}"#) == "b[1][0].y[1].z")
        #expect(repeated(#"{"\u0061": 1, "a": 2}"#) == "a")
        #expect(repeated(#"{"a": {"b": 1}, "c": {"b": 2}, "a": 3}"#) == "a")
        #expect(repeated(#"{"é": 1, "e\u0301": 2}"#) == nil)  // other code points: other names
    }

    @Test func aCeremonyReadsTheOptionsAsSent() throws {
        let body = try Body.Ceremony.decode(Array(#"{"options": {"challenge": "Y2g", "rpId": "example.com"}, "origin": "https://example.com"}"#.utf8))
        #expect(String(decoding: body.options.bytes, as: UTF8.self) == #"{"challenge": "Y2g", "rpId": "example.com"}"#)
    }
}
