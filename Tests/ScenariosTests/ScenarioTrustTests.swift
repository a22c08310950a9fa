import Foundation
import Testing

@testable import Scenarios

/// What a scenario author must be able to rely on: every device agrees on the default passkey,
/// a step that only looks changes nothing that follows it, and a device that has not yet seen a
/// deletion cannot undo it.
private func run(_ text: String) throws(ScenarioError) -> ScenarioReport {
    let path = NSTemporaryDirectory() + "/scenario-trust-\(UUID().uuidString).scn"
    #expect(FileManager.default.createFile(atPath: path, contents: Data(text.utf8)))
    defer { try? FileManager.default.removeItem(atPath: path) }
    var options = ScenarioRunner.Options()
    options.keepGoing = true
    options.environment = [:]
    return try ScenarioRunner.run(file: path, options: options)
}

/// The time, text and result of the last `count` steps.
private func results(_ report: ScenarioReport, last count: Int) -> [String] {
    report.steps.suffix(count).map { s in
        "\(s.time) \(s.step) => \(s.outcome) " + s.result.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    }
}

// MARK: - Reads draw nothing from the seeded stream

private let setUp = """
    seed 21
    device add phone pin 1111
    device add laptop pin 2222
    sync upload 1s..4s download 1s..6s
    phone register user alice
    """

private let after = """
    phone register user bob
    laptop register user carol
    sync status
    wait 3s
    sync status
    wait 20s
    laptop holds
    phone holds
    """

@Test func aStepThatOnlyLooksChangesNoLaterIdOrSyncTime() throws {
    let plain = try run(setUp + "\n" + after)
    #expect(plain.passed, "\(plain.failures)")
    let looking = [
        "phone holds", "laptop holds", "sync status", "phone sign user alice", "laptop sign => notHandled",
        "phone sign user nobody => notHandled", "laptop sign via phone", "phone sign uv required pin 9999 => failed",
    ]
    let count = after.split(separator: "\n").count
    let expected = results(plain, last: count)
    #expect(count == 8 && plain.steps.count == 13)
    for step in looking {
        let report = try run(setUp + "\n" + step + "\n" + after)
        #expect(report.passed, "\(step): \(report.failures)")
        #expect(report.steps.count == plain.steps.count + 1)
        #expect(results(report, last: count) == expected, "after '\(step)'")
    }
}

// MARK: - Only writes draw from the seeded stream: a failed registration neither

@Test func aFailedRegistrationChangesNoLaterIdOrSyncTime() throws {
    let plain = try run(setUp + "\n" + after)
    #expect(plain.passed, "\(plain.failures)")
    let failing = [
        "phone register user alice exclude alice => matchedExcludedCredential",
        "phone register user dave action cancel => canceled",
        "laptop register user erin uv required pin 9999 => failed",
        "phone register user frank alg rs256 profile icloud-keychain => notHandled",
    ]
    let count = after.split(separator: "\n").count
    let expected = results(plain, last: count)
    for step in failing {
        let report = try run(setUp + "\n" + step + "\n" + after)
        #expect(report.passed, "\(step): \(report.failures)")
        #expect(report.steps.count == plain.steps.count + 1)
        #expect(results(report, last: count) == expected, "after '\(step)'")
    }
}

// MARK: - One default passkey for every device

@Test func everyDevicePicksTheSameDefaultPasskeyForTwoMadeInOneSecond() throws {
    // Two passkeys for two users, made 400 ms apart in one second on two devices: the laptop's
    // is the newer. Once both have synced, each device lists them in the same order and signs
    // with the same one by default, the newer.
    for gap in ["400ms", "1ms"] {
        let report = try run("""
            seed 5
            device add phone pin 1111
            device add laptop pin 2222
            sync upload 1s download 1s
            at 10.1s phone register user alice as older
            wait \(gap)
            laptop register user bob as newer
            wait 10s
            phone holds => older,newer
            laptop holds => older,newer
            phone sign => ok credential=newer
            laptop sign => ok credential=newer
            """)
        #expect(report.passed, "gap \(gap): \(report.failures)")
    }
}

// MARK: - No revision brings back a deletion it did not see

@Test func aSignCountFromADeviceThatHadNotSeenTheDeletionDoesNotBringThePasskeyBack() throws {
    let report = try run("""
        seed 8
        device add phone pin 1111
        device add laptop pin 2222
        sync upload 1s download 2s
        phone register user alice as counting sign-counter
        wait 5s
        laptop holds => counting
        # the RP no longer knows the passkey: the phone deletes it
        phone signal unknown counting => ok removed=counting
        # before the deletion reaches it, the laptop signs, and its new count is a revision too
        wait 1s
        laptop sign => ok credential=counting count=1
        wait 10s
        phone holds => none
        laptop holds => none
        laptop sign => notHandled
        phone sign => notHandled
        """)
    #expect(report.passed, "\(report.failures)")
    // The timeline names the change that lost, right after the step that made it.
    let lines = report.timelineLines
    let signed = try #require(lines.firstIndex { $0.contains("laptop sign => ok credential=counting") })
    #expect(lines[signed + 1].hasPrefix("# dropped at 6s: laptop's revision "), "\(report.timeline)")
    #expect(lines[signed + 1].hasSuffix(" of counting, made after phone deleted it at 5s (the deletion wins)"))
    #expect(report.dropped.count == 1 && report.dropped[0].deletedBy == "phone")
}
