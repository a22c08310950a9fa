import Foundation
import Keychain
import Scenarios
import Session
import Testing
import VirtualAuthenticator

/// An account of one phone (PIN 1111) on a virtual clock, where the person's waits pass, in a
/// throw-away vault.
private func phone() throws -> (Session, VirtualClock, String) {
    let directory = try ScenarioRunner.makeWorkspace()
    let clock = VirtualClock(start: 1_800_000_000_000)
    var pin = Array("1111".utf8), passphrase = Array("p".utf8)
    let session = try Session.create(AccountSpec(path: directory + "/vault", passphrase: SecureBytes(consuming: &passphrase), kdf: .min,
                                                 devices: [AccountSpec.DeviceSpec(name: "phone", pin: SecureBytes(consuming: &pin))],
                                                 keeping: .throwAway(storeInMemory: true), clock: clock, seed: 5),
                                     people: KnownPeople(pins: ["phone": "1111"], timeouts: .on(clock)))
    return (session, clock, directory)
}

private let caller = CallerContext(origin: "https://example.com", mediation: .conditional)

private func passkey(_ session: Session, _ user: String, extensions: String = "") throws -> [UInt8] {
    let options = """
    {"rp": {"id": "example.com", "name": "Example"}, "user": {"id": "\(Base64URL.encode(Array(user.utf8)))", "name": "\(user)", "displayName": "\(user)"},
     "challenge": "AAAAAAAAAAAAAAAAAAAAAA", "pubKeyCredParams": [{"type": "public-key", "alg": -7}],
     "authenticatorSelection": {"residentKey": "required", "userVerification": "required"}\(extensions)}
    """
    return try session.register(RegisterRequest(device: "phone", caller: CallerContext(origin: "https://example.com"),
                                                options: .json(Array(options.utf8)))).credential.id
}

/// The autofill list is the authenticator's own candidate list: a passkey credProtect holds back
/// from a sign-in without user verification is not offered, nor one the RP's signal said is unknown; a pick
/// from it signs with that passkey, as the person, and ends the call.
@Test func aConditionalSignInOffersTheAuthenticatorsCandidatesAndSignsThePick() throws {
    let (session, _, directory) = try phone()
    defer { ScenarioRunner.removeWorkspace(directory) }
    let alice = try passkey(session, "alice"), bob = try passkey(session, "bob")
    let guarded = try passkey(session, "carol", extensions: #", "extensions": {"credentialProtectionPolicy": "userVerificationRequired"}"#)
    let hidden = try passkey(session, "dave")
    try session.signal(device: "phone", .unknownCredential, optionsJSON: Array(#"{"rpId": "example.com", "credentialId": "\#(Base64URL.encode(hidden))"}"#.utf8),
                       origin: "https://example.com")
    let pending = try session.beginConditional(SignRequest(device: "phone", caller: caller, options: .built(RequestOptionsBuilder(userVerification: "discouraged"))))
    #expect(pending.state == .pending && pending.rpId == "example.com" && pending.timeout == 300_000)
    #expect(try pending.offered().map(\.id) == [alice, bob])
    // With user verification the credProtect passkey is a candidate, and so offered.
    let verifying = try session.beginConditional(SignRequest(device: "phone", caller: caller, options: .built(RequestOptionsBuilder(userVerification: "required"))))
    #expect(try verifying.offered().map(\.id) == [alice, bob, guarded])
    let signed = try verifying.pick(AccountChoice(user: "bob"))
    #expect(signed.credential.id == bob && signed.flags.contains("UV") && verifying.state == .picked)
    do {
        _ = try verifying.pick(AccountChoice(credentialId: alice))
        Issue.record("picked twice")
    } catch { #expect(error.name == .usage, "\(error)") }
}

/// A passkey the list does not offer cannot be picked (`notHandled`) and the call stays pending;
/// a dismissed list offers nothing, and the call waits out its timeout on the account's clock,
/// then ends `timedOut`.
@Test func aDismissedConditionalSignInWaitsOutItsTimeout() throws {
    let (session, clock, directory) = try phone()
    defer { ScenarioRunner.removeWorkspace(directory) }
    let alice = try passkey(session, "alice")
    let pending = try session.beginConditional(SignRequest(device: "phone", caller: caller,
                                                           options: .built(RequestOptionsBuilder(allow: [[1, 2, 3]], timeout: 60_000))))
    #expect(try pending.offered().isEmpty)
    do {
        _ = try pending.pick(AccountChoice(credentialId: alice))
        Issue.record("picked a passkey the list does not offer")
    } catch { #expect(error.name == .notHandled && error.message.contains("does not offer"), "\(error)") }
    #expect(pending.state == .pending)
    let start = clock.now
    try pending.dismiss()
    #expect(pending.state == .dismissed)
    #expect(try pending.offered().isEmpty)
    let ended = pending.waitOut()
    #expect(ended.name == .timedOut && clock.now == start + 60_000 && pending.state == .timedOut)
    #expect(throws: SessionError.self) { try pending.dismiss() }
}

/// The timeout passes on the account's clock: moved past it, the call is over (`timedOut`);
/// the next conditional sign-in on the device takes the list (`canceled`); what the browser
/// refuses at once is thrown by the beginning, and only a conditional sign-in begins.
@Test func aConditionalSignInEndsByItsTimeoutOrTheNextOne() throws {
    let (session, _, directory) = try phone()
    defer { ScenarioRunner.removeWorkspace(directory) }
    let alice = try passkey(session, "alice")
    let first = try session.beginConditional(SignRequest(device: "phone", caller: caller, options: .built(RequestOptionsBuilder(timeout: 10_000))))
    try session.clock(.advance(milliseconds: 10_000))
    #expect(first.state == .timedOut)
    do {
        _ = try first.offered()
        Issue.record("offered past the timeout")
    } catch { #expect(error.name == .timedOut, "\(error)") }
    let second = try session.beginConditional(SignRequest(device: "phone", caller: caller, options: .built(RequestOptionsBuilder())))
    let third = try session.beginConditional(SignRequest(device: "phone", caller: caller, options: .built(RequestOptionsBuilder())))
    #expect(second.state == .canceled && third.state == .pending)
    do {
        _ = try second.pick(AccountChoice(credentialId: alice))
        Issue.record("picked from a list another request took")
    } catch { #expect(error.name == .canceled, "\(error)") }
    #expect(try third.pick(AccountChoice(credentialId: alice)).credential.id == alice)
    do {
        _ = try session.beginConditional(SignRequest(device: "phone", caller: CallerContext(origin: "https://example.com"),
                                                     options: .built(RequestOptionsBuilder())))
        Issue.record("a modal sign-in began as a conditional one")
    } catch { #expect(error.name == .usage, "\(error)") }
    do {
        _ = try session.beginConditional(SignRequest(device: "phone", caller: caller, options: .built(RequestOptionsBuilder(rpId: "other.example"))))
        Issue.record("another site's RP ID was accepted")
    } catch { #expect(error.name == .securityError, "\(error)") }
}

/// What the person was asked, by outcome: the server uses up a queued person by it, so a request
/// refused before any prompt leaves the person for the next one.
@Test func anOutcomeSaysWhetherThePersonWasAsked() {
    let asked = SessionError.Name.allCases.filter(\.askedThePerson)
    #expect(asked == [.canceled, .failed, .notInteractive, .biometryLockout, .timedOut])
}
