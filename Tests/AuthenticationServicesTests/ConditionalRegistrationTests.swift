import AuthenticationServices
import Foundation
import Session
import TestSupport
import Testing
import VirtualAuthenticator

/// A conditional registration request (the automatic passkey upgrade) of example.com for `name`.
func upgradeRequest(_ name: String, userVerification: ASAuthorizationPublicKeyCredentialUserVerificationPreference = .preferred)
    -> ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest {
    let request = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: "example.com")
        .createCredentialRegistrationRequest(challenge: Data("upgrade \(name)".utf8), name: name, userID: Data("id-\(name)".utf8),
                                             requestStyle: .conditional)
    request.userVerificationPreference = userVerification
    return request
}

extension PlatformPasskeyTests {
    /// Right after the person signed in with a saved password — one handed to the app by a
    /// password request — `performRequests()` of a conditional registration makes the passkey
    /// without asking the person (whose every answer would fail it): UP and UV 0, BE BS AT,
    /// attestation `none`, clientDataJSON of a create; even with user verification required. A
    /// request beside it is dropped, as iOS drops it, and an AutoFill-assisted request waiting on
    /// the phone waits on.
    @Test(.timeLimit(.minutes(1)))
    func aConditionalRegistrationRightAfterAPasswordSignInMakesAPasskeyWithoutUI() async throws {
        let directory = try TemporaryDirectory()
        let phones = try Phones(in: directory.path)
        defer { AuthenticationServicesHost.current = nil }
        let host = phones.phone, log = DelegateLog()
        host.savePassword("secret", user: "alice", domain: "example.com")
        host.savePassword("hunter2", user: "bob", domain: "example.com")
        host.sheetPick = .password(user: "alice")
        ASAuthorizationController.with([ASAuthorizationPasswordProvider().createRequest()], log).performRequests()
        #expect(try (await log.next().authorization.credential as? ASPasswordCredential)?.user == "alice")

        let autoFill = DelegateLog()
        ASAuthorizationController.with([signInRequest()], autoFill).performAutoFillAssistedRequests()
        host.person = PersonRequest(action: .wrongPIN)
        let request = upgradeRequest("alice", userVerification: .required)
        ASAuthorizationController.with([request, ASAuthorizationPasswordProvider().createRequest()], log).performRequests()
        let made = try await log.next().authorization
        #expect(made.provider === request.provider)
        let registration = try #require(made.credential as? ASAuthorizationPlatformPublicKeyCredentialRegistration)
        let attestation = try CBORValue.decode(Array(try #require(registration.rawAttestationObject)))
        #expect(attestation[.text("fmt")] == .text("none") && attestation[.text("attStmt")] == .map([]))
        let authenticatorData = try AuthenticatorData(parsing: try #require(attestation[.text("authData")]?.bytesValue))
        #expect(authenticatorData.flags == AuthenticatorFlags([.backupEligible, .backupState, .attestedCredentialData]))
        #expect(Array(registration.credentialID) == authenticatorData.attestedCredentialData?.credentialId)
        let clientData = try #require(JSONSerialization.jsonObject(with: registration.rawClientDataJSON) as? [String: String])
        #expect(clientData == ["type": "webauthn.create", "challenge": Base64URL.encode(Data("upgrade alice".utf8)), "origin": "https://example.com"])
        let held = try phones.session.passkeys(device: "phone", rpId: "example.com")
        #expect(held.map(\.id) == [Array(registration.credentialID)] && held.first?.userName == "alice")
        // It shows no UI: the AutoFill-assisted request waiting on the phone waits on.
        #expect(await host.isAutoFillWaiting() && autoFill.calls == 0)
    }

    /// Without a recent password sign-in of that name on the phone — none, another user's, one
    /// older than the window on the account's clock, one of a name with no saved password at the
    /// RP ID — or with a passkey of that name already there, a conditional registration ends
    /// `.canceled` without asking the person (a wrong finger would fail a prompt) and makes
    /// nothing. A password filled by password AutoFill into the app's fields counts, within the
    /// window, as Apple's words say.
    @Test(.timeLimit(.minutes(1)))
    func aConditionalRegistrationWithoutARecentPasswordSignInEndsCanceledWithoutUI() async throws {
        let directory = try TemporaryDirectory()
        let phones = try Phones(in: directory.path)
        defer { AuthenticationServicesHost.current = nil }
        let host = phones.phone, log = DelegateLog()
        host.person = PersonRequest(action: .wrongPIN)
        func upgrade(_ name: String) async -> Outcome {
            ASAuthorizationController.with([upgradeRequest(name)], log).performRequests()
            return await log.next()
        }

        #expect(await upgrade("alice").error?.code == .canceled)
        host.savePassword("secret", user: "alice", domain: "example.com")
        host.savePassword("other", user: "bob", domain: "other.example")
        host.associatedDomains = AssociatedDomains(presuming: ["example.com", "other.example"])
        let filled = try host.autoFillPassword(user: "bob", domain: "other.example")
        #expect(filled.password == "other")
        #expect(await upgrade("alice").error?.code == .canceled)
        // Bob signed in, but his password is not saved at example.com.
        #expect(await upgrade("bob").error?.code == .canceled)
        #expect(throws: SessionError.self) { try host.autoFillPassword(user: "carol", domain: "example.com") }

        _ = try host.autoFillPassword(user: "alice", domain: "example.com")
        try phones.advance(5 * 60 * 1000 + 1)
        #expect(await upgrade("alice").error?.code == .canceled)
        #expect(try phones.session.passkeys(device: "phone", rpId: "example.com").isEmpty)

        _ = try host.autoFillPassword(user: "alice", domain: "example.com")
        try phones.advance(5 * 60 * 1000)
        #expect(try await upgrade("alice").authorization.credential is ASAuthorizationPlatformPublicKeyCredentialRegistration)
        #expect(await upgrade("alice").error?.code == .canceled)
        #expect(try phones.session.passkeys(device: "phone", rpId: "example.com").count == 1)

        host.conditionalRegistrationWindow = .seconds(1)
        host.savePassword("again", user: "dave", domain: "example.com")
        _ = try host.autoFillPassword(user: "dave", domain: "example.com")
        try phones.advance(1001)
        #expect(await upgrade("dave").error?.code == .canceled)
        // A window longer than the clock's range is the whole range, not a crash.
        host.conditionalRegistrationWindow = .seconds(Int64.max)
        #expect(try await upgrade("dave").authorization.credential is ASAuthorizationPlatformPublicKeyCredentialRegistration)
    }

    /// A phone that cannot make passkeys — no passcode, or iCloud Keychain off — makes none
    /// without UI either. After a recent password sign-in the upgrade fails as a modal
    /// registration does (`.deviceNotConfiguredForPasskeyCreation`, the same reason): iOS's
    /// iCloud Keychain runs the same preflight first and hands on its error
    /// (ASCAgent.mm, `_requestConditionalRegistrationOnProvider:…`); without one it ends
    /// `.canceled`, as it does before the preflight is reached.
    @Test(.timeLimit(.minutes(1)))
    func aConditionalRegistrationOnAPhoneThatCannotMakePasskeysFailsAsAModalOneDoes() async throws {
        let host = try AuthenticationServicesHost.throwAwayPhone(applicationIdentifier: "ABCDE12345.com.example.app",
                                                                 associatedDomains: AssociatedDomains(presuming: ["example.com"]))
        try host.session.addDevice("ipad", pin: nil)
        AuthenticationServicesHost.current = host
        defer { AuthenticationServicesHost.current = nil }
        let log = DelegateLog()
        func upgrade(_ name: String) async -> Outcome {
            ASAuthorizationController.with([upgradeRequest(name)], log).performRequests()
            return await log.next()
        }

        host.device = "ipad"
        host.savePassword("secret", user: "alice", domain: "example.com")
        #expect(await upgrade("alice").error == ASAuthorizationError(.canceled))
        _ = try host.autoFillPassword(user: "alice", domain: "example.com")
        let noPasscode = try #require(await upgrade("alice").error)
        #expect(noPasscode.code == .deviceNotConfiguredForPasskeyCreation)
        #expect(noPasscode.userInfo[NSLocalizedFailureReasonErrorKey] as? String == "Device not configured for passkey requests.")
        #expect(try host.session.passkeys(device: "ipad").isEmpty)

        host.device = "iphone"
        try host.session.change(.passkeysSupported(false), device: "iphone")
        _ = try host.autoFillPassword(user: "alice", domain: "example.com")
        let keychainOff = try #require(await upgrade("alice").error)
        #expect(keychainOff.code == .deviceNotConfiguredForPasskeyCreation)
        #expect(keychainOff.userInfo[NSLocalizedFailureReasonErrorKey] as? String == "Cannot create a passkey. iCloud Keychain is off.")
        #expect(try host.session.passkeys(device: "iphone").isEmpty)

        try host.session.change(.passkeysSupported(true), device: "iphone")
        #expect(try await upgrade("alice").authorization.credential is ASAuthorizationPlatformPublicKeyCredentialRegistration)
    }

    /// `.preferImmediatelyAvailableCredentials` with no passkey of the RP on this phone ends
    /// `.canceled` without UI — here a passkey the iPad of the same account made, not yet synced
    /// to the phone (without the option the sheet is shown, and fails); once the account's clock
    /// passes the sync delays, the phone signs with it.
    @Test(.timeLimit(.minutes(1)))
    func preferImmediatelyAvailableCredentialsCancelsUntilTheOtherDevicesPasskeySyncs() async throws {
        let directory = try TemporaryDirectory()
        let phones = try Phones(in: directory.path)
        defer { AuthenticationServicesHost.current = nil }
        try phones.session.setDelays(upload: DelayRange(parsing: "30s"), download: DelayRange(parsing: "1m"))
        AuthenticationServicesHost.current = phones.ipad
        let made = try await registerPasskey("alice")
        AuthenticationServicesHost.current = phones.phone
        let log = DelegateLog()

        phones.phone.person = PersonRequest(action: .wrongPIN)
        ASAuthorizationController.with([signInRequest()], log).performRequests(options: .preferImmediatelyAvailableCredentials)
        let immediate = try #require(await log.next().error)
        #expect(immediate.code == .canceled)
        ASAuthorizationController.with([signInRequest()], log).performRequests()
        #expect(await log.next().error?.code == .failed)

        try phones.advance(2 * 60 * 1000)
        phones.phone.person = PersonRequest()
        ASAuthorizationController.with([signInRequest()], log).performRequests(options: .preferImmediatelyAvailableCredentials)
        let signed = try #require(try await log.next().authorization.credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion)
        #expect(signed.credentialID == made.id)
        let message = Array(signed.rawAuthenticatorData) + SHA256.hash(Array(signed.rawClientDataJSON))
        #expect(SignatureVerifier.verify(signature: Array(signed.signature), message: message, spki: made.spki))
    }
}
