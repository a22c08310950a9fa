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

/// A user's account (a durable vault) whose first device is the phone (PIN 1111), on a store of
/// its own (`store`: one shared with other machines).
private func account(in directory: String, store: String? = nil, recoverySecret: String = RecoverySecret.make()) throws(SessionError) -> Session {
    try Session.create(AccountSpec(path: directory + "/vault", passphrase: secret("p"), kdf: .min,
                                   devices: [AccountSpec.DeviceSpec(name: "phone", pin: secret("1111"))],
                                   store: store.map { AccountSpec.SharedStore(address: $0, recoverySecret: recoverySecret) }),
                       people: KnownPeople(pins: ["phone": "1111"], timeouts: .atOnce))
}

/// An existing vault opened, and another machine's device joined, through the one door; what
/// the store checks found is the session's `warnings`.
@Suite struct OpeningTests {
    @Test func anOpenedVaultSaysWhatTheStoreChecksFoundAsWarningsEachTakenOnce() throws {
        let directory = try ScenarioRunner.makeWorkspace()
        defer { ScenarioRunner.removeWorkspace(directory) }
        let store = directory + "/store"
        do {
            let made = try account(in: directory, store: store)
            #expect(made.warnings.isEmpty)
        }
        let opened = try Session.open(at: directory + "/vault", passphrase: secret("p"), access: .read)
        #expect(opened.deviceNames == ["phone"] && opened.warnings.isEmpty && opened.takeWarnings().isEmpty)
        // A store other users may write to is set aside: the problem is a warning, taken once.
        #expect(chmod(store, 0o777) == 0)
        defer { chmod(store, 0o700) }
        let warned = try Session.open(at: directory + "/vault", passphrase: secret("p"), access: .write, verifyingFirst: true)
        #expect(warned.warnings.count == 1)
        #expect(warned.warnings.first?.hasPrefix("the account store at ") == true && warned.warnings.first?.contains("is not used") == true)
        #expect(warned.takeWarnings() == warned.warnings)
        #expect(warned.takeWarnings().isEmpty && warned.warnings.count == 1)
    }

    @Test func aWriterWaitsForTheVaultAsItsFrontEndSays() throws {
        let directory = try ScenarioRunner.makeWorkspace()
        defer { ScenarioRunner.removeWorkspace(directory) }
        _ = try account(in: directory)
        // No vault there: the error table's row, nothing asked.
        let error = #expect(throws: SessionError.self) {
            _ = try Session.open(at: directory + "/none", passphrase: secret("p"))
        }
        #expect(error?.name == .vaultNotFound)
        let wrong = #expect(throws: SessionError.self) {
            _ = try Session.open(at: directory + "/vault", passphrase: secret("q"), waiting: Session.Waiting(limit: .seconds(1)))
        }
        #expect(wrong?.name == .vaultLocked)
    }

    @Test func aDeviceJoinsByTheRecoverySecretAndByAnEnrolledDevicesApproval() throws {
        let directory = try ScenarioRunner.makeWorkspace()
        defer { ScenarioRunner.removeWorkspace(directory) }
        let store = directory + "/store"
        let recovery = RecoverySecret.make()
        let phone = try account(in: directory, store: store, recoverySecret: recovery)
        // By the recovery secret, read only once the new vault's place is known to be free.
        var asked = 0
        let taken = #expect(throws: SessionError.self) {
            _ = try Session.join(at: directory + "/vault", passphrase: secret("p"), kdf: .min, store: store, name: "laptop", pin: secret("2222"),
                                 approval: .recoverySecret { asked += 1; return recovery })
        }
        #expect(taken?.name == .vaultExists && asked == 0)
        let laptop = try Session.join(at: directory + "/laptop", passphrase: secret("p"), kdf: .min, store: store, name: "laptop",
                                      pin: secret("2222"), approval: .recoverySecret { asked += 1; return recovery })
        #expect(asked == 1 && laptop.deviceNames == ["laptop"])
        // By approval: the code shown is approved on the phone, and the tablet joins.
        var shown: String?
        let tablet = try Session.join(at: directory + "/tablet", passphrase: secret("p"), kdf: .min, store: store, name: "tablet", pin: nil,
                                      approval: .approval(timeout: .seconds(60), shown: { code throws(SessionError) in
                                          shown = code
                                          #expect(try phone.approveJoin(code: code, approvedBy: "phone") == "tablet")
                                      }, stop: { false }))
        #expect(shown != nil && tablet.deviceNames == ["tablet"])
        #expect(try tablet.passkeys(device: "tablet", rpId: nil).isEmpty)
    }
}
