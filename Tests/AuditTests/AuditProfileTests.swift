import Foundation
import Session
import Testing
@testable import Audit

/// The profile file's format, and the battery's selection.
struct AuditProfileTests {
    @Test func theProfileDocsAuditShowsIsTheRpServerPreset() throws {
        let doc = try String(contentsOfFile: #filePath.replacingOccurrences(of: "Tests/AuditTests/AuditProfileTests.swift", with: "docs/audit.md"),
                             encoding: .utf8)
        let block = try #require(doc.components(separatedBy: "```json\n").dropFirst().first?.components(separatedBy: "```").first)
        let profile = try JSONDecoder().decode(AuditProfile.self, from: Data(block.utf8))
        #expect(profile == AuditProfile.rpServer)
    }

    @Test func onlyAWholeTemplateStringIsFilledAndWithJSONNotText() {
        let template = JSONValue.object(["credential": .string("${response}"), "note": .string("user ${user}"), "u": .string("${user}"),
                                         "list": .array([.string("${password}"), .string("${other}")])])
        let filled = template.filled(["response": .object(["id": .string("x")]), "user": .string("alice"), "password": .string("pw")])
        #expect(filled == .object(["credential": .object(["id": .string("x")]), "note": .string("user ${user}"), "u": .string("alice"),
                                   "list": .array([.string("pw"), .string("${other}")])]))
        #expect(JSONValue.object(["a": .object(["b": .integer(1)])]).member("a.b") == .integer(1))
        #expect(JSONValue.object(["a": .integer(1)]).member("") == .object(["a": .integer(1)]))
        #expect(JSONValue.object(["a": .integer(1)]).member("a.b") == nil)
    }

    @Test func casesAreChosenByIdOrFamilyAndAnUnknownNameIsAUsageError() throws {
        var options = AuditRunner.Options()
        options.only = ["replay"]
        options.skip = ["reg-replay"]
        #expect(try AuditRunner.selected(options).map(\.id) == ["sign-replay", "reg-without-begin", "reg-in-another-users-session", "sign-without-begin"])
        options.only = ["reg-replay-typo"]
        #expect(throws: AuditError.self) { try AuditRunner.selected(options) }
        #expect(Set(AuditCase.battery.map(\.id)).count == AuditCase.battery.count, "ids are unique")
    }

    @Test func aJUnitReportEscapesWhatAnRPWroteAndCountsEachVerdict() {
        let result = { (id: String, verdict: AuditReport.Verdict, evidence: String) in
            AuditReport.Result(id: id, family: .replay, spec: "§7.2", check: "c", reference: "r", verdict: verdict, evidence: evidence, exchanges: nil)
        }
        let report = AuditReport(target: "http://127.0.0.1:1", origin: "https://rp.example", results: [
            result("a", .rejected, "400"), result("b", .accepted, "200 <b>\"yes\" & \u{1}\u{7}"), result("c", .inconclusive, "why"),
        ])
        let xml = report.junitXML
        #expect(xml.contains("tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\""))
        #expect(xml.contains("200 &lt;b&gt;&quot;yes&quot; &amp; ??"))
        #expect(!xml.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" })
    }

    @Test func signUpLogInAndSignedInMayBeLeftOutAndAreThenNil() throws {
        let json = """
        {"origin": "https://localhost",
         "register": {"begin": {"method": "POST", "path": "/attestation/options", "body": {"username": "${user}"}}, "options": "",
                      "finish": {"method": "POST", "path": "/attestation/result", "body": "${response}"}},
         "signIn": {"begin": {"method": "POST", "path": "/assertion/options", "body": {"username": "${user}"}}, "options": "",
                    "finish": {"method": "POST", "path": "/assertion/result", "body": "${response}"}},
         "signedIn": null,
         "success": {"member": "status", "equals": "ok"}}
        """
        let profile = try JSONDecoder().decode(AuditProfile.self, from: Data(json.utf8))
        #expect(profile.signUp == nil && profile.logIn == nil && profile.signedIn == nil)
        #expect(profile.signedInSuccess == AuditProfile.Success())
        _ = try profile.checked()
        // Written back, the members left out stay out, and it reads as the same profile.
        let written = try JSONEncoder().encode(profile)
        let members = try #require(try JSONSerialization.jsonObject(with: written) as? [String: Any])
        #expect(members["signUp"] == nil && members["logIn"] == nil && members["signedIn"] == nil)
        #expect(try JSONDecoder().decode(AuditProfile.self, from: written) == profile)
    }

    @Test func thePresetsAreProfilesTheirOwnChecksTake() throws {
        for (name, preset) in AuditProfile.presets {
            #expect(try preset.checked() == preset, "\(name)")
        }
        let conformance = AuditProfile.fidoConformance
        #expect(conformance.signUp == nil && conformance.logIn == nil && conformance.signedIn == nil)
        #expect(conformance.register.begin.body?.member("username") == .string("${user}"))
        #expect(conformance.register.begin.body?.member("displayName") == .string("${user}"))
        #expect(conformance.success == AuditProfile.Success(member: "status", equals: .string("ok")))
    }

    @Test func aYesIsA2xxAndEveryPredicateGivenHolds() {
        typealias Success = AuditProfile.Success
        let ok = JSONValue.object(["status": .string("ok")])
        #expect(Success().holds(status: 204, json: nil, text: "", setCookies: []))
        #expect(!Success().holds(status: 302, json: nil, text: "", setCookies: []))
        #expect(Success(member: "status", equals: .string("ok")).holds(status: 200, json: ok, text: "", setCookies: []))
        #expect(!Success(member: "status", equals: .string("ok")).holds(status: 200, json: .object(["status": .string("failed")]), text: "", setCookies: []))
        #expect(!Success(member: "status", equals: .string("ok")).holds(status: 400, json: ok, text: "", setCookies: []))

        let cookie = Success(cookie: "sid")
        #expect(cookie.holds(status: 200, json: nil, text: "", setCookies: ["sid=abc; Path=/; HttpOnly"]))
        #expect(cookie.holds(status: 200, json: nil, text: "", setCookies: ["other=1", "sid=abc; Max-Age=3600"]))
        #expect(!cookie.holds(status: 200, json: nil, text: "", setCookies: []))
        #expect(!cookie.holds(status: 200, json: nil, text: "", setCookies: ["sidx=abc", "other=sid"]))
        // A cookie cleared (as a logout does) is not one set.
        #expect(!cookie.holds(status: 200, json: nil, text: "", setCookies: ["sid=; Path=/"]))
        #expect(!cookie.holds(status: 200, json: nil, text: "", setCookies: ["sid=abc; Max-Age=0"]))
        #expect(!cookie.holds(status: 200, json: nil, text: "", setCookies: ["sid=abc; Expires=Thu, 01 Jan 1970 00:00:00 GMT"]))
        #expect(cookie.holds(status: 200, json: nil, text: "", setCookies: ["sid=abc; Expires=Fri, 01 Jan 2100 00:00:00 GMT"]))
        #expect(!cookie.holds(status: 500, json: nil, text: "", setCookies: ["sid=abc"]))

        let page = Success(contains: "Signed in as")
        #expect(page.holds(status: 200, json: nil, text: "<html><p>Signed in as alice</p></html>", setCookies: []))
        #expect(!page.holds(status: 200, json: nil, text: "<html><form>Sign in</form></html>", setCookies: []))
        // Given together, each must hold.
        let both = Success(member: "status", equals: .string("ok"), cookie: "sid")
        #expect(!both.holds(status: 200, json: ok, text: "", setCookies: []))
        #expect(both.holds(status: 200, json: ok, text: "", setCookies: ["sid=1"]))
    }

    @Test func aHostileProfileIsBadInputNamingWhatIsWrongBeforeAnythingIsSent() {
        let base = AuditProfile.rpServer
        func failure(_ change: (inout AuditProfile) -> Void) -> AuditError? {
            var profile = base
            change(&profile)
            do { _ = try profile.checked() } catch { return error }
            return nil
        }
        let cases: [(String, (inout AuditProfile) -> Void)] = [
            ("signedIn.path", { $0.signedIn?.path = "http://evil.example/account" }),
            ("signedIn.path", { $0.signedIn?.path = "//evil.example/account" }),
            ("signedIn.path", { $0.signedIn?.path = "account" }),
            ("logIn.path", { $0.logIn?.path = "/a b" }),
            ("register.finish.path", { $0.register.finish.path = "/x\r\nHost: evil.example" }),
            ("signIn.begin.method", { $0.signIn.begin.method = "GET /x HTTP/1.1\r\nX-Injected: 1\r\n" }),
            ("signUp.method", { $0.signUp?.method = "" }),
            ("success.cookie", { $0.success.cookie = "a b" }),
            ("signedInSuccess.contains", { $0.signedInSuccess.contains = "" }),
            ("no signUp", { $0.signUp = nil; $0.register.begin.body = .object([:]) }),
        ]
        for (what, change) in cases {
            let error = failure(change)
            #expect(error?.name == .badInput, "\(what)")
            #expect(error?.message.contains(what == "no signUp" ? "has no signUp" : what) == true, "\(what): \(error?.message ?? "no error")")
        }
        // Without a sign-up, a registration begin that names the user, at any depth, will do.
        #expect(failure { $0.signUp = nil; $0.register.begin.body = .object(["who": .array([.string("${user}")])]) } == nil)
    }

    @Test func aDiscoverableSignInMayBeLeftOutAndItsBeginNamesNoUser() throws {
        // Left out (the conformance API has none), it is nil, and stays out when written back.
        let conformance = try JSONEncoder().encode(AuditProfile.fidoConformance)
        let members = try #require(try JSONSerialization.jsonObject(with: conformance) as? [String: Any])
        #expect(members["discoverableSignIn"] == nil && AuditProfile.fidoConformance.discoverableSignIn == nil)
        #expect(try JSONDecoder().decode(AuditProfile.self, from: conformance).discoverableSignIn == nil)
        // The bank's: a begin with no username, the username-first sign-in's finish.
        let bank = try #require(AuditProfile.rpServer.discoverableSignIn)
        #expect(bank.begin.path == "/login/begin" && bank.begin.body == .object([:]) && bank.finish == AuditProfile.rpServer.signIn.finish)

        // Its requests are checked as every other, and a begin that names the user anywhere is
        // not a discoverable sign-in.
        let cases: [(String, (inout AuditProfile.Ceremony) -> Void)] = [
            ("discoverableSignIn.begin.path", { $0.begin.path = "//evil.example/login/begin" }),
            ("discoverableSignIn.finish.path", { $0.finish.path = "/login/finish\r\nHost: evil.example" }),
            ("discoverableSignIn.finish.method", { $0.finish.method = "POST /x HTTP/1.1\r\n" }),
            ("discoverableSignIn.begin.headers", { $0.begin.headers = ["X-Evil": "a\r\nHost: elsewhere"] }),
            ("discoverableSignIn.begin names no user", { $0.begin.body = .object(["username": .string("${user}")]) }),
            ("discoverableSignIn.begin names no user", { $0.begin.body = .object(["who": .array([.string("${user}")])]) }),
            ("discoverableSignIn.begin names no user", { $0.begin.path = "/login/begin?username=${user}" }),
            ("discoverableSignIn.begin names no user", { $0.begin.headers = ["X-User": "${user}"] }),
        ]
        for (what, change) in cases {
            var profile = AuditProfile.rpServer
            change(&profile.discoverableSignIn!)
            do {
                _ = try profile.checked()
                Issue.record("\(what): no error")
            } catch {
                #expect(error.name == .badInput && error.message.contains(what), "\(what): \(error.message)")
            }
        }
    }

    @Test func aProfileFileOfWrongTypesIsBadInputThatNamesTheMember() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("audit-profile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let valid = try JSONSerialization.jsonObject(with: JSONEncoder().encode(AuditProfile.fidoConformance)) as! [String: Any]
        let wrong: [(String, Any)] = [("signUp", "POST /signup"), ("signedIn", 3), ("success", ["cookie": 1]), ("register", [])]
        for (member, value) in wrong {
            var members = valid
            members[member] = value
            let file = directory.appendingPathComponent("\(member).json")
            try JSONSerialization.data(withJSONObject: members).write(to: file)
            #expect(throws: AuditError.self) { try AuditProfile(file: file.path) }
            do { _ = try AuditProfile(file: file.path) } catch {
                #expect(error.name == .badInput && error.message.contains(member), "\(member): \(error.message)")
            }
        }
    }
}
