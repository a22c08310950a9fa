import AuthenticationServices
import Foundation
import Session
import TestSupport
import Testing
import VirtualAuthenticator

extension PlatformPasskeyTests {
    /// `performAutoFillAssistedRequests()` waits, without UI, on the conditional sign-in: the
    /// QuickType bar offers the RP's passkeys, oldest first; a passkey it does not offer cannot be
    /// picked, and the request waits on; dismissed, it offers nothing and the delegate hears
    /// nothing, until the field is focused again; the person's pick signs, and the delegate gets
    /// that passkey's assertion, once.
    @Test(.timeLimit(.minutes(1)))
    func anAutoFillRequestWaitsUntilThePersonPicksAPasskey() async throws {
        let directory = try TemporaryDirectory()
        let phones = try Phones(in: directory.path)
        defer { AuthenticationServicesHost.current = nil }
        let alice = try await registerPasskey("alice"), bob = try await registerPasskey("bob")

        let log = DelegateLog()
        let autoFill = ASAuthorizationController.with([signInRequest("quicktype")], log)
        autoFill.performAutoFillAssistedRequests()
        #expect(await phones.phone.isAutoFillWaiting())
        let offered = try await phones.phone.autoFillSuggestions()
        #expect(offered.map(\.credentialID) == [alice.id, bob.id])
        #expect(offered.map(\.userName) == ["alice", "bob"] && offered[1].userID == Data("id-bob".utf8))

        do {
            try await phones.phone.pick(credentialID: Data([1, 2, 3]))
            Issue.record("a passkey the bar does not offer was picked")
        } catch { #expect(error.name == .notHandled, "\(error)") }
        try await phones.phone.dismissAutoFill()
        #expect(try await phones.phone.autoFillSuggestions().isEmpty)
        #expect(await phones.phone.isAutoFillWaiting() && log.calls == 0)
        try await phones.phone.focusAutoFillField()
        #expect(try await phones.phone.autoFillSuggestions().map(\.credentialID) == [alice.id, bob.id])

        try await phones.phone.pick(credentialID: bob.id)
        let outcome = await log.next()
        #expect(outcome.controller === autoFill)
        let assertion = try #require(try outcome.authorization.credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion)
        #expect(assertion.credentialID == bob.id && assertion.userID == Data("id-bob".utf8) && assertion.attachment == .platform)
        let clientData = try #require(JSONSerialization.jsonObject(with: assertion.rawClientDataJSON) as? [String: String])
        #expect(clientData == ["type": "webauthn.get", "challenge": Base64URL.encode(Data("quicktype".utf8)), "origin": "https://example.com"])
        let message = Array(assertion.rawAuthenticatorData) + SHA256.hash(Array(assertion.rawClientDataJSON))
        #expect(SignatureVerifier.verify(signature: Array(assertion.signature), message: message, spki: bob.spki))
        #expect(try AuthenticatorData(parsing: Array(assertion.rawAuthenticatorData)).flags.contains(.userVerified))
        #expect(await !phones.phone.isAutoFillWaiting())
        await #expect(throws: SessionError.self) { try await phones.phone.pick(credentialID: bob.id) }
        #expect(log.calls == 1)
    }

    /// `cancel()` ends a waiting AutoFill-assisted request `.canceled`; while one waits, a second
    /// AutoFill-assisted request and a modal one fail `.failed` with iOS's reason and the armed one
    /// waits on (measured on iOS 26.5 and 27: docs/ios.md); a Face ID the person dismisses after
    /// picking signs nothing, and the request waits on.
    @Test(.timeLimit(.minutes(1)))
    func anAutoFillRequestEndsCanceledByCancelAndOtherRequestsFailWhileItWaits() async throws {
        let directory = try TemporaryDirectory()
        let phones = try Phones(in: directory.path)
        defer { AuthenticationServicesHost.current = nil }
        let alice = try await registerPasskey("alice")

        let log = DelegateLog()
        let first = ASAuthorizationController.with([signInRequest()], log)
        first.performAutoFillAssistedRequests()
        #expect(await phones.phone.isAutoFillWaiting())
        first.cancel()
        let canceled = await log.next()
        #expect(canceled.controller === first && canceled.error?.code == .canceled)
        #expect(await !phones.phone.isAutoFillWaiting())

        // One request of the app at a time: while one is armed, a second AutoFill-assisted request
        // and a modal one fail at once with iOS's reason, and the armed one waits on.
        let armed = ASAuthorizationController.with([signInRequest()], log)
        armed.performAutoFillAssistedRequests()
        #expect(await phones.phone.isAutoFillWaiting())
        let second = ASAuthorizationController.with([signInRequest()], log)
        second.performAutoFillAssistedRequests()
        let refused = await log.next()
        #expect(refused.controller === second && refused.error?.code == .failed)
        #expect(refused.error?.userInfo[NSLocalizedFailureReasonErrorKey] as? String == "Request already in progress for specified application identifier.")
        let modal = ASAuthorizationController.with([signInRequest("modal")], log)
        modal.performRequests()
        let busy = await log.next()
        #expect(busy.controller === modal && busy.error?.code == .failed)
        #expect(busy.error?.userInfo[NSLocalizedFailureReasonErrorKey] as? String == "Request already in progress for specified application identifier.")
        #expect(await phones.phone.isAutoFillWaiting())
        // The app cancels its armed request first (as apps do before a sheet); then the sheet signs.
        armed.cancel()
        let ended = await log.next()
        #expect(ended.controller === armed && ended.error?.code == .canceled)
        let sheet = ASAuthorizationController.with([signInRequest("modal")], log)
        sheet.performRequests()
        let answered = await log.next()
        #expect(answered.controller === sheet)
        #expect(try (answered.authorization.credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion)?.credentialID == alice.id)
        #expect(await !phones.phone.isAutoFillWaiting())

        let third = ASAuthorizationController.with([signInRequest()], log)
        third.performAutoFillAssistedRequests()
        phones.phone.person = PersonRequest(action: .cancel)
        do {
            try await phones.phone.pick(credentialID: alice.id)
            Issue.record("a dismissed Face ID signed")
        } catch { #expect(error.name == .timedOut, "\(error)") }
        #expect(await phones.phone.isAutoFillWaiting() && log.calls == 5)
        phones.phone.person = PersonRequest()
        try await phones.phone.pick(credentialID: alice.id)
        let signed = await log.next()
        #expect(signed.controller === third)
        #expect(try (signed.authorization.credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion)?.credentialID == alice.id)
        #expect(log.calls == 6)
    }

    /// The seeds' pattern: the delegate that hears `.canceled` (the modal sheet dismissed) performs
    /// an AutoFill-assisted request again, from within the call; the person then picks from the
    /// QuickType bar, and the same delegate gets the assertion.
    @Test(.timeLimit(.minutes(1)))
    func theAppResumesAutoFillAfterACancel() async throws {
        let directory = try TemporaryDirectory()
        let phones = try Phones(in: directory.path)
        defer { AuthenticationServicesHost.current = nil }
        let alice = try await registerPasskey("alice")

        let log = DelegateLog()
        var resumed: ASAuthorizationController?
        log.then = { outcome in
            guard outcome.error?.code == .canceled, resumed == nil else { return }
            let controller = ASAuthorizationController(authorizationRequests: [signInRequest("resumed")])
            controller.delegate = log
            controller.performAutoFillAssistedRequests()
            resumed = controller
        }
        phones.phone.person = PersonRequest(action: .cancel)
        ASAuthorizationController.with([signInRequest("sheet")], log).performRequests()
        #expect(await log.next().error?.code == .canceled)
        phones.phone.person = PersonRequest()
        #expect(try await phones.phone.autoFillSuggestions().map(\.credentialID) == [alice.id])
        try await phones.phone.pick(credentialID: alice.id)
        let signed = await log.next()
        #expect(signed.controller === resumed)
        let assertion = try #require(try signed.authorization.credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion)
        #expect(try #require(JSONSerialization.jsonObject(with: assertion.rawClientDataJSON) as? [String: String])["challenge"]
            == Base64URL.encode(Data("resumed".utf8)))
    }

    /// While an AutoFill-assisted request waits on the phone nothing is blocked: a modal request
    /// of the iPad is answered and its delegate called, and the phone's request still waits, then
    /// signs; its WebAuthn timeout passing on the account's clock does not end it (an AutoFill
    /// request has none), and the bar offers the iPad's passkey once it has synced.
    @Test(.timeLimit(.minutes(1)))
    func otherControllersAreAnsweredWhileAnAutoFillRequestWaits() async throws {
        let directory = try TemporaryDirectory()
        let phones = try Phones(in: directory.path)
        defer { AuthenticationServicesHost.current = nil }
        let alice = try await registerPasskey("alice")

        let waiting = DelegateLog()
        ASAuthorizationController.with([signInRequest()], waiting).performAutoFillAssistedRequests()
        #expect(await phones.phone.isAutoFillWaiting())

        try phones.session.setDelays(upload: DelayRange(parsing: "1m"), download: DelayRange(parsing: "1m"))
        AuthenticationServicesHost.current = phones.ipad
        let other = DelegateLog()
        ASAuthorizationController.with([ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: "example.com")
            .createCredentialRegistrationRequest(challenge: Data("c".utf8), name: "carol", userID: Data("id-carol".utf8))], other).performRequests()
        let carol = try #require(try await other.next().authorization.credential as? ASAuthorizationPlatformPublicKeyCredentialRegistration)
        #expect(await phones.phone.isAutoFillWaiting() && waiting.calls == 0)
        #expect(try await phones.phone.autoFillSuggestions().map(\.credentialID) == [alice.id])

        // Past the conditional sign-in's timeout, and past the sync of the iPad's passkey to the phone.
        try phones.advance(11 * 60 * 1000)
        AuthenticationServicesHost.current = phones.phone
        #expect(try await phones.phone.autoFillSuggestions().map(\.credentialID) == [alice.id, carol.credentialID])
        try await phones.phone.pick(credentialID: alice.id)
        #expect(try await waiting.next().authorization.credential is ASAuthorizationPlatformPublicKeyCredentialAssertion)
    }

    /// Only platform assertion requests support AutoFill assistance: a password request (or a
    /// registration) fails it with iOS's reason; a domain the app is not associated with fails it
    /// before anything waits.
    @Test(.timeLimit(.minutes(1)))
    func onlyAssertionRequestsSupportAutoFill() async throws {
        let directory = try TemporaryDirectory()
        let phones = try Phones(in: directory.path)
        defer { AuthenticationServicesHost.current = nil }
        let log = DelegateLog()

        ASAuthorizationController.with([signInRequest(), ASAuthorizationPasswordProvider().createRequest()], log).performAutoFillAssistedRequests()
        var failed = try #require(await log.next().error)
        #expect(failed.code == .failed)
        #expect((failed as NSError).userInfo[NSLocalizedFailureReasonErrorKey] as? String == "ASAuthorizationPasswordRequest does not support AutoFill assistance.")

        let registration = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: "example.com")
            .createCredentialRegistrationRequest(challenge: Data("c".utf8), name: "a", userID: Data("a".utf8))
        ASAuthorizationController.with([registration], log).performAutoFillAssistedRequests()
        failed = try #require(await log.next().error)
        #expect((failed as NSError).userInfo[NSLocalizedFailureReasonErrorKey] as? String
            == "ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest does not support AutoFill assistance.")

        let elsewhere = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: "other.example")
        ASAuthorizationController.with([elsewhere.createCredentialAssertionRequest(challenge: Data("c".utf8))], log).performAutoFillAssistedRequests()
        failed = try #require(await log.next().error)
        #expect(failed.code == .failed)
        #expect((failed as NSError).userInfo[NSLocalizedFailureReasonErrorKey] as? String
            == "Application with identifier TEAM123456.com.example.app is not associated with domain other.example")
        #expect(await !phones.phone.isAutoFillWaiting())
    }
}

extension PlatformPasskeyTests {
    /// A pick whose Face ID does not match falls back to the passcode, as a modal sheet does: the
    /// passcode dismissed, the pick signs nothing and the request waits on; typed, the pick signs
    /// and the delegate gets the assertion.
    @Test(.timeLimit(.minutes(1)))
    func aPickWhoseFaceIDDoesNotMatchFallsBackToThePasscode() async throws {
        let directory = try TemporaryDirectory()
        let phones = try Phones(in: directory.path)
        defer { AuthenticationServicesHost.current = nil }
        let alice = try await registerPasskey("alice")

        let log = DelegateLog()
        ASAuthorizationController.with([signInRequest("passcode")], log).performAutoFillAssistedRequests()
        #expect(await phones.phone.isAutoFillWaiting())
        phones.phone.person = PersonRequest(action: .wrongPIN)
        do {
            try await phones.phone.pick(credentialID: alice.id)
            Issue.record("a pick signed though Face ID did not match and the passcode was dismissed")
        } catch { #expect(error.name == .canceled, "\(error)") }
        #expect(await phones.phone.isAutoFillWaiting() && log.calls == 0)

        phones.phone.passcodeFallback = .enterPasscode
        try await phones.phone.pick(credentialID: alice.id)
        let assertion = try #require(try await log.next().authorization.credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion)
        #expect(assertion.credentialID == alice.id)
        #expect(try AuthenticatorData(parsing: Array(assertion.rawAuthenticatorData)).flags.contains(.userVerified))
        #expect(log.calls == 1)
    }
}
