import Foundation
import Session
import Testing
@testable import Server

/// Request bodies decoded into their types: what a route refuses, and how it names it — the way
/// to a member inside an object or a list, the members the type takes — read from the type.
final class RequestBodyTests {
    let scratch: String
    let service: AccountService

    init() throws {
        var template = Array("/tmp/authctl-server-test-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw HTTPServerError(message: "mkdtemp") }
        scratch = String(cString: made)
        service = AccountService(token: "t", scratch: scratch)
    }

    deinit {
        service.close()
        try? FileManager.default.removeItem(atPath: scratch)
    }

    func call(_ method: String, _ path: String, _ body: String = "") -> (status: Int, json: [String: Any]) {
        let response = service.handle(HTTPRequest(method: method, path: path, authorization: "Bearer t", body: Array(body.utf8), bodyTooLarge: false))
        return (response.status, (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:])
    }

    func refusal(_ method: String, _ path: String, _ body: String) -> String? {
        let (status, json) = call(method, path, body)
        guard status == 400, json["name"] as? String == "badInput" else { return "\(status) \(json)" }
        return json["detail"] as? String
    }

    @Test func aMemberInsideAnObjectOrAListIsNamedByTheWayToIt() {
        #expect(refusal("POST", "/accounts", #"{"devices": [{"name": "a"}, {"name": 5}]}"#) == "devices[1].name must be a string")
        #expect(refusal("POST", "/accounts", #"{"devices": [{"name": "a", "pinn": "1"}]}"#)
                == "devices[0] has a member 'pinn' it does not take (it takes aaguid, maxPINAttempts, name, pin, profile)")
        #expect(refusal("POST", "/accounts", #"{"devices": [{"pin": "1"}]}"#) == "devices[0].name is required")
        #expect(refusal("POST", "/accounts", #"{"devices": [null]}"#) == "devices[0] must be a JSON object")
        #expect(refusal("POST", "/accounts", #"{"clock": {"mode": "virtual", "start": true}}"#)?.hasPrefix("clock.start must be a whole number") == true)
        #expect(refusal("POST", "/accounts", #"{"sync": {"upload": "2s", "later": 1}}"#)
                == "sync has a member 'later' it does not take (it takes backupStateImmediate, device, download, seed, upload)")
        #expect(refusal("POST", "/accounts", #"{"devices": [{"name": "a", "maxPINAttempts": 101}]}"#)
                == "devices[0].maxPINAttempts must be a whole number from 0 to 100")
    }

    @Test func aBodyMemberTheTypeDoesNotHaveIsRefusedNamingThoseItHas() throws {
        #expect(refusal("POST", "/accounts", #"{"device": []}"#)
                == "the body has a member 'device' this route does not take (it takes clock, devices, profile, storage, store, sync)")
        let account = try #require(call("POST", "/accounts").json["id"] as? String)
        #expect(refusal("POST", "/accounts/\(account)/devices/phone/offline", #"{"now": true}"#)
                == "the body has a member 'now' this route does not take (it takes none)")
        #expect(refusal("POST", "/accounts/\(account)/devices/phone/sign", #"{"options": {}, "origin": "https://a.example", "request": {"id": "r", "tab": 1}}"#)
                == "request has a member 'tab' it does not take (it takes id, page, url)")
        #expect(refusal("POST", "/accounts/\(account)/devices/phone/sign", #"{"options": {}, "origin": "https://a.example", "request": {"page": "p"}}"#)
                == "request.id is required: the request's own id")
        #expect(refusal("POST", "/accounts/\(account)/devices/phone/sign", #"{"options": {}, "origin": "https://a.example", "mediation": "later"}"#)
                == "mediation must be one of silent, optional, required, conditional, not 'later'")
        #expect(refusal("POST", "/accounts/\(account)/devices/phone/sign", #"{"origin": "https://a.example"}"#) == "options is required")
        #expect(refusal("POST", "/accounts/\(account)/devices/phone/sign", #"{"options": {}, "origin": "https://a.example", "origin": "https://b.example"}"#)
                == "the body has the member 'origin' more than once")
    }

    @Test func webDriversCommandsPassOverUnknownMembersButAddCredentialTakesCredentialParametersOnly() throws {
        let session = try #require((call("POST", "/session", #"{"capabilities": {"alwaysMatch": {}}}"#).json["value"] as? [String: Any])?["sessionId"] as? String)
        let added = call("POST", "/session/\(session)/webauthn/authenticator", #"{"protocol": "ctap2", "transport": "internal", "ctap2_1Extra": 1}"#)
        let authenticator = try #require(added.json["value"] as? String)
        #expect(call("POST", "/session/\(session)/webauthn/authenticator/\(authenticator)/uv", #"{"isUserVerified": true, "x": 1}"#).status == 200)
        let refused = call("POST", "/session/\(session)/webauthn/authenticator/\(authenticator)/credential",
                           #"{"credentialId": "AQ", "rpId": "example.com", "privateKey": "AQ", "userHandle": "AQ", "colour": "blue"}"#)
        #expect(refused.status == 400)
        #expect((refused.json["detail"] as? String)?.hasPrefix("the body has a member 'colour' this route does not take") == true)
        #expect((refused.json["value"] as? [String: Any])?["error"] as? String == "invalid argument")
    }

    @Test func signCountIsAWholeNumberUpTo4294967295OrNullWhichIsNotItsAbsence() throws {
        // WebAuthn L3 §11 (w3c/webauthn#2382): "a 32-bit unsigned integer value in the range `0`
        // to `4294967295`, inclusive, or `null`" — null a value of its own, unlike any other member.
        func read(_ json: String) throws -> Body.CredentialProperties { try Body.CredentialProperties.decode(Array(json.utf8)) }
        #expect(try read(#"{"signCount": null}"#).signCount?.value == .some(nil))
        #expect(try read(#"{"signCount": null}"#).signCount?.setting == .noCounter)
        #expect(try read(#"{}"#).signCount == nil)
        #expect(try read(#"{"signCount": 4294967295}"#).signCount?.setting == .counting(from: UInt32.max))
        #expect(try read(#"{"signCount": 7.0}"#).signCount?.value == 7)
        for refused in ["-1", "4294967296", "0.5", "\"7\"", "true", "[]"] {
            #expect(throws: Problem.self) { try read(#"{"signCount": \#(refused)}"#) }
        }
        // The other members' null is still their absence.
        #expect(try read(#"{"backupState": null, "signCount": 1}"#).backupState == nil)
        #expect(BodyShape.of(Body.CredentialProperties.self).members.last?.value == .scalar(["integer", "null"], names: nil))
    }

    @Test func webDriversErrorsCarryTheStatusWebDriverGivesThem() throws {
        let session = try #require((call("POST", "/session").json["value"] as? [String: Any])?["sessionId"] as? String)
        let base = "/session/\(session)/webauthn/authenticator"
        func error(_ answer: (status: Int, json: [String: Any])) -> String? { (answer.json["value"] as? [String: Any])?["error"] as? String }
        // An authenticator id that matches none: §11's invalid argument, 400 (not a 404).
        let unknown = call("GET", base + "/nobody/credentials")
        #expect((unknown.status, error(unknown), unknown.json["status"] as? Int) == (400, "invalid argument", 400))
        // A protocol or an extension this endpoint does not have: unsupported operation, 500.
        for body in [#"{"protocol": "ctap1/u2f", "transport": "usb"}"#, #"{"protocol": "ctap2", "transport": "usb", "extensions": ["uvm"]}"#] {
            let refused = call("POST", base, body)
            #expect((refused.status, error(refused), refused.json["status"] as? Int) == (500, "unsupported operation", 500))
        }
        let authenticator = try #require(call("POST", base, #"{"protocol": "ctap2", "transport": "usb", "extensions": ["prf", "largeBlob"]}"#).json["value"] as? String)
        let missing = call("POST", base + "/\(authenticator)/credential", #"{"credentialId": "AQ", "isResidentCredential": true, "rpId": "example.com", "privateKey": "AQ", "userHandle": "AQ"}"#)
        #expect((missing.status, error(missing)) == (400, "invalid argument"))
        #expect((missing.json["detail"] as? String)?.hasPrefix("signCount is required") == true)
    }

    @Test func aTypesMembersAreReadFromItsConformance() {
        let shape = BodyShape.of(Body.PINRequest.self)
        #expect(shape.members.map(\.name) == ["pin", "currentPin", "reset", "approvedBy", "approverPin"])
        #expect(shape.members.map(\.required) == [true, false, false, false, false])
        #expect(shape.members.map(\.value) == [.scalar(["string"], names: nil), .scalar(["string"], names: nil), .scalar(["boolean"], names: nil),
                                               .scalar(["string"], names: nil), .scalar(["string"], names: nil)])
        guard case .list(.object(let device)) = BodyShape.of(Body.NewAccount.self).members[0].value else {
            Issue.record("devices is a list of objects")
            return
        }
        #expect(device.type == "DeviceSpec" && device.members.first { $0.required }?.name == "name")
    }
}
