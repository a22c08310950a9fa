import Foundation
import Keychain
import Scenarios
import Session
import Testing
import VirtualAuthenticator

/// An account of a phone (PIN 1111) and a laptop (PIN 2222) in a throw-away vault.
private func twoDevices() throws -> (Session, String) {
    let directory = try ScenarioRunner.makeWorkspace()
    var pin = Array("1111".utf8), laptop = Array("2222".utf8), passphrase = Array("p".utf8)
    let account = try Account.create(at: directory + "/vault", passphrase: SecureBytes(consuming: &passphrase), kdf: .min,
                                     deviceName: "phone", biometricPIN: SecureBytes(consuming: &pin), random: .seeded(3))
    var phonePIN = Array("1111".utf8)
    try account.addDevice("laptop", pin: SecureBytes(consuming: &laptop), approvedBy: "phone",
                          approver: UserPolicy(pin: SecureBytes(consuming: &phonePIN)))
    let session = Session(account: account, people: KnownPeople(pins: ["phone": "1111", "laptop": "2222"], timeouts: .atOnce))
    return (session, directory)
}

private let caller = CallerContext(origin: "https://example.com")

/// One rule for both ceremonies: over hybrid the other device answers, with its PIN and its
/// store, and the response says cross-platform; the device the call comes from keeps nothing.
@Test func bothCeremoniesReachAnotherDeviceOverHybrid() throws {
    let (session, directory) = try twoDevices()
    defer { ScenarioRunner.removeWorkspace(directory) }
    let made = try session.register(RegisterRequest(device: "laptop", via: "phone", caller: caller,
                                                    options: .built(CreationOptionsBuilder(userName: "alice", userVerification: "required"))))
    #expect(made.attachment == .crossPlatform && made.flags.contains("UV"))
    #expect(try session.passkeys(device: "phone").map(\.id) == [made.credential.id])
    let signed = try session.sign(SignRequest(device: "laptop", via: "phone", caller: caller, options: .built(RequestOptionsBuilder())))
    #expect(signed.attachment == .crossPlatform && signed.credential.id == made.credential.id)
    let local = try session.sign(SignRequest(device: "phone", caller: caller, options: .built(RequestOptionsBuilder())))
    #expect(local.attachment == .platform)
}

/// A device cannot reach itself over hybrid, whichever ceremony asks, and `via` names a device
/// of the account: both the caller's words (`usage`), before anything is asked or stored.
@Test func hybridNeedsAnotherDeviceOfTheAccount() throws {
    let (session, directory) = try twoDevices()
    defer { ScenarioRunner.removeWorkspace(directory) }
    for via in ["phone", "tablet"] {
        #expect(throws: SessionError.self) {
            try session.register(RegisterRequest(device: "phone", via: via, caller: caller, options: .built(CreationOptionsBuilder())))
        }
        do {
            _ = try session.sign(SignRequest(device: "phone", via: via, caller: caller, options: .built(RequestOptionsBuilder())))
            Issue.record("signed via \(via)")
        } catch { #expect(error.name == .usage, "\(error)") }
    }
    // Without a device named, the call comes from the first device.
    do {
        _ = try session.register(RegisterRequest(via: "phone", caller: caller, options: .built(CreationOptionsBuilder())))
        Issue.record("registered via the first device itself")
    } catch { #expect(error.name == .usage, "\(error)") }
    #expect(try session.passkeys(device: "phone").isEmpty)
}

/// The browser asking needs passkey support as much as the device answering.
@Test func neitherSideOfHybridMayLackPasskeySupport() throws {
    let (session, directory) = try twoDevices()
    defer { ScenarioRunner.removeWorkspace(directory) }
    for unsupported in ["laptop", "phone"] {
        try session.change(.passkeysSupported(false), device: unsupported)
        do {
            _ = try session.register(RegisterRequest(device: "laptop", via: "phone", caller: caller, options: .built(CreationOptionsBuilder())))
            Issue.record("registered with \(unsupported) unsupported")
        } catch { #expect(error.name == .passkeysNotSupported && error.message.contains(unsupported), "\(error)") }
        try session.change(.passkeysSupported(true), device: unsupported)
    }
}
