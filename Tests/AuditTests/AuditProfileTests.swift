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
}
