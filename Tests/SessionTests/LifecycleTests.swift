import Foundation
import Keychain
import Scenarios
import Session
import Testing
import VirtualAuthenticator

private func secret(_ text: String) -> SecureBytes {
    var bytes = Array(text.utf8)
    return SecureBytes(consuming: &bytes)
}

/// A throw-away account of `devices` (name, PIN) made by ``Session/create(_:people:)``.
private func account(_ devices: [(String, String?)], people: any People, in directory: String) throws(SessionError) -> Session {
    try Session.create(AccountSpec(path: directory + "/vault", passphrase: secret("p"), kdf: .min,
                                   devices: devices.map { AccountSpec.DeviceSpec(name: $0.0, pin: $0.1.map(secret)) },
                                   keeping: .throwAway(storeInMemory: true), seed: 1),
                       people: people)
}

/// The account's life through the one door: made from one description, its people a port, and
/// the default approver one rule.
@Suite struct LifecycleTests {
    @Test func aDeviceAddedWithAPINIsApprovedOnTheFirstOtherEnrolledDeviceWhosePINThePeopleKnow() throws {
        let directory = try ScenarioRunner.makeWorkspace()
        defer { try? Device.removeVault(at: directory + "/vault"); ScenarioRunner.removeWorkspace(directory) }
        // The people know the laptop's PIN, not the phone's: the phone, first enrolled, cannot approve.
        let people = KnownPeople(timeouts: .atOnce)
        let session = try account([("phone", "1111")], people: people, in: directory)
        people["phone"] = nil
        try session.addDevice("laptop", pin: secret("2222"), approvedBy: "phone", approverPerson: PersonRequest(pin: "1111"))
        people["laptop"] = "2222"
        #expect(session.defaultApprover(for: "tablet") == "laptop")
        try session.addDevice("tablet", pin: secret("3333"))
        #expect(try session.biometry(device: "tablet").enrolled)
        // The approval was the laptop's: the phone's PIN was never asked for (no failure counted).
        #expect(try session.biometry(device: "phone").failures == 0)
        // Nobody knowing any PIN, no device approves by default.
        people["laptop"] = nil
        #expect(session.defaultApprover(for: "watch") == nil)
    }

    @Test func anAccountMadeWithSeveralDevicesHasThemAllEnrolledEachApprovedByTheDefault() throws {
        let directory = try ScenarioRunner.makeWorkspace()
        defer { try? Device.removeVault(at: directory + "/vault"); ScenarioRunner.removeWorkspace(directory) }
        let people = KnownPeople(pins: ["phone": "1111", "laptop": "2222"], timeouts: .atOnce)
        let session = try account([("phone", "1111"), ("laptop", "2222"), ("key", nil)], people: people, in: directory)
        #expect(session.deviceNames == ["phone", "laptop", "key"])
        #expect(try session.biometry(device: "laptop").enrolled)
        #expect(try !session.biometry(device: "key").enrolled)
    }

    @Test func anAccountThatCannotBeFinishedLeavesNoVault() throws {
        let directory = try ScenarioRunner.makeWorkspace()
        defer { try? Device.removeVault(at: directory + "/vault"); ScenarioRunner.removeWorkspace(directory) }
        // The second device's approver knows no PIN: the account is not made, and nothing stays.
        let error = #expect(throws: SessionError.self) {
            _ = try account([("phone", "1111"), ("laptop", "2222")], people: Nobody(), in: directory)
        }
        #expect(error?.name == .notInteractive)
        #expect(!Device.exists(at: directory + "/vault"))
        // Made again with people who know the phone's PIN, it is.
        let session = try account([("phone", "1111"), ("laptop", "2222")], people: KnownPeople(pins: ["phone": "1111"], timeouts: .atOnce),
                                  in: directory)
        #expect(session.deviceNames == ["phone", "laptop"])
    }

    @Test func aResetDeviceRecoversWithItsFormerPINWhenItsPersonKnowsItElseIsApproved() throws {
        let directory = try ScenarioRunner.makeWorkspace()
        defer { try? Device.removeVault(at: directory + "/vault"); ScenarioRunner.removeWorkspace(directory) }
        let people = KnownPeople(pins: ["phone": "1111", "laptop": "2222"], timeouts: .atOnce)
        let session = try account([("phone", "1111"), ("laptop", "2222")], people: people, in: directory)
        try session.change(.reset, device: "laptop")
        // Its person still knows the former PIN: it recovers with it, and no other device is asked.
        people["phone"] = "0000"
        try session.enrollPIN(secret("2468"), device: "laptop")
        #expect(try session.biometry(device: "phone").failures == 0)
        // Reset again, and its person forgot it: the phone approves (its PIN known again).
        try session.change(.reset, device: "laptop")
        people["laptop"] = nil
        people["phone"] = "1111"
        try session.enrollPIN(secret("1357"), device: "laptop")
        #expect(try session.biometry(device: "laptop").enrolled)
    }
}
