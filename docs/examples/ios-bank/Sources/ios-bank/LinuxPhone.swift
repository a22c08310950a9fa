#if os(Linux)
import AuthenticationServices
import Foundation
import Session

/// What stands for the iPhone on Linux: a device of a throw-away authctl account, in a directory
/// of its own that `close()` deletes, running an app associated with the bank's domain. On iOS
/// none of this exists: the system is the device.
@MainActor
final class LinuxPhone {
    private let directory: URL

    /// `person` is what the one at the phone does at every sheet: approve (with the PIN) or cancel.
    init(person: PersonRequest) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ios-bank-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var pin = Array("1111".utf8), passphrase = Array("ios-bank".utf8)
        let session = try Session.create(AccountSpec(path: directory.appendingPathComponent("vault").path,
                                                     passphrase: SecureBytes(consuming: &passphrase), kdf: .min,
                                                     devices: [AccountSpec.DeviceSpec(name: "iphone", pin: SecureBytes(consuming: &pin))],
                                                     keeping: .throwAway(storeInMemory: true)),
                                         people: KnownPeople(pins: ["iphone": "1111"], timeouts: .atOnce))
        AuthenticationServicesHost.current = AuthenticationServicesHost(
            session: session, device: "iphone", applicationIdentifier: "ABCDE12345.example.yourbank",
            associatedDomains: [BankAuthService.relyingPartyIdentifier], person: person)
    }

    func close() {
        AuthenticationServicesHost.current = nil
        try? FileManager.default.removeItem(at: directory)
    }
}
#endif
