import AuthenticationServices
import Foundation
import Session
import TestSupport
import Testing
import VirtualAuthenticator

/// An app's passkey code as iOS teams write it: a delegate that resumes a continuation, the
/// controller performing one request, on the main actor.
@MainActor
final class PasskeyCoordinator: NSObject, ASAuthorizationControllerDelegate {
    /// What the delegate was handed, carried to the awaiting test on the same main actor.
    struct Delivered: @unchecked Sendable {
        let authorization: ASAuthorization
    }

    private var continuation: CheckedContinuation<Delivered, any Error>?
    private(set) var calls = 0

    func perform(_ request: ASAuthorizationRequest, options: ASAuthorizationController.RequestOptions = [],
                 cancelAtOnce: Bool = false) async throws -> ASAuthorization {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Delivered, any Error>) in
            self.continuation = continuation
            let controller = ASAuthorizationController(authorizationRequests: [request])
            controller.delegate = self
            controller.performRequests(options: options)
            if cancelAtOnce { controller.cancel() }
        }.authorization
    }

    func authorizationController(controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization) {
        calls += 1
        continuation?.resume(returning: Delivered(authorization: authorization))
        continuation = nil
    }

    func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error) {
        calls += 1
        continuation?.resume(throwing: error)
        continuation = nil
    }
}

/// A phone of a throw-away account (PIN 1111) as the device the app runs on, associated with example.com.
@MainActor
private func phone(in directory: String) throws -> AuthenticationServicesHost {
    var pin = Array("1111".utf8), passphrase = Array("p".utf8)
    let session = try Session.create(AccountSpec(path: directory + "/vault", passphrase: SecureBytes(consuming: &passphrase), kdf: .min,
                                                 devices: [AccountSpec.DeviceSpec(name: "phone", pin: SecureBytes(consuming: &pin))]),
                                     people: KnownPeople(pins: ["phone": "1111"], timeouts: .atOnce))
    let host = AuthenticationServicesHost(session: session, device: "phone", applicationIdentifier: "TEAM123456.com.example.app",
                                          associatedDomains: ["example.com"])
    AuthenticationServicesHost.current = host
    return host
}

/// clientDataJSON's string members, and whether it has only the three iOS sends.
private func clientData(_ bytes: Data) throws -> [String: String] {
    let object = try #require(JSONSerialization.jsonObject(with: bytes) as? [String: Any])
    // iOS writes type, challenge and origin, in that order, and no crossOrigin.
    #expect(Set(object.keys) == ["type", "challenge", "origin"])
    #expect(String(decoding: bytes, as: UTF8.self).hasPrefix(#"{"type":""#))
    return object.compactMapValues { $0 as? String }
}

/// One device per process, as one iPhone runs the app: the ceremonies take turns.
@Suite(.serialized) @MainActor struct PlatformPasskeyTests {
/// A registration answers what iOS answers (iCloud Keychain's shape: fmt none, an empty attStmt,
/// UP UV BE BS AT, counter 0; clientDataJSON type, challenge, origin https://RPID), and a sign-in
/// with that passkey is signed by the key its attestation object carries.
@Test func aRegistrationAndASignInAnswerAsIOSDoes() async throws {
    let directory = try TemporaryDirectory()
    let host = try phone(in: directory.path)
    defer { AuthenticationServicesHost.current = nil }
    _ = host
    let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: "example.com")
    let coordinator = PasskeyCoordinator()
    let challenge = Data((0..<32).map { UInt8($0) }), userID = Data("user-1".utf8)

    let made = try await coordinator.perform(provider.createCredentialRegistrationRequest(challenge: challenge, name: "alice", userID: userID))
    let registration = try #require(made.credential as? ASAuthorizationPlatformPublicKeyCredentialRegistration)
    #expect(made.provider === provider)
    #expect(try clientData(registration.rawClientDataJSON)
        == ["type": "webauthn.create", "challenge": Base64URL.encode(challenge), "origin": "https://example.com"])
    let attestation = try CBORValue.decode(Array(try #require(registration.rawAttestationObject)))
    #expect(attestation[.text("fmt")] == .text("none"))
    #expect(attestation[.text("attStmt")] == .map([]))
    let authenticatorData = try AuthenticatorData(parsing: try #require(attestation[.text("authData")]?.bytesValue))
    #expect(authenticatorData.flags == AuthenticatorFlags([.userPresent, .userVerified, .backupEligible, .backupState, .attestedCredentialData]))
    #expect(authenticatorData.signCount == 0)
    #expect(authenticatorData.rpIdHash == SHA256.hash(Array("example.com".utf8)))
    let attested = try #require(authenticatorData.attestedCredentialData)
    #expect(Array(registration.credentialID) == attested.credentialId)
    // iPhones' ids are 20 bytes, and iCloud Keychain's AAGUID is the profile's unless set otherwise.
    #expect(registration.credentialID.count == 20)
    #expect(attested.aaguid == AuthenticatorProfile.iCloudKeychain.aaguid)
    #expect(registration.attachment == .platform)

    let signIn = provider.createCredentialAssertionRequest(challenge: Data("sign-in".utf8))
    signIn.allowedCredentials = [ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: registration.credentialID)]
    let signed = try await coordinator.perform(signIn)
    let assertion = try #require(signed.credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion)
    #expect(try clientData(assertion.rawClientDataJSON)
        == ["type": "webauthn.get", "challenge": Base64URL.encode(Data("sign-in".utf8)), "origin": "https://example.com"])
    #expect(assertion.credentialID == registration.credentialID)
    #expect(assertion.userID == userID)
    let message = Array(assertion.rawAuthenticatorData) + SHA256.hash(Array(assertion.rawClientDataJSON))
    #expect(SignatureVerifier.verify(signature: Array(assertion.signature), message: message, spki: attested.publicKey.subjectPublicKeyInfo))
    #expect(!SignatureVerifier.verify(signature: Array(assertion.signature), message: message + [0], spki: attested.publicKey.subjectPublicKeyInfo))
    #expect(coordinator.calls == 2)
}

/// The failures a passkey request sees on iOS: canceled (the sheet dismissed, `cancel()`, no
/// passkey here with preferImmediatelyAvailableCredentials), matchedExcludedCredential, and
/// failed with iOS's reason for a domain the app is not associated with.
@Test func theFailuresArriveAsASAuthorizationErrors() async throws {
    let directory = try TemporaryDirectory()
    let host = try phone(in: directory.path)
    defer { AuthenticationServicesHost.current = nil }
    let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: "example.com")
    let coordinator = PasskeyCoordinator()
    let challenge = Data(repeating: 7, count: 32)

    await #expect(throws: ASAuthorizationError(.canceled, userInfo: [NSLocalizedFailureReasonErrorKey: "No credentials available for login."])) {
        _ = try await coordinator.perform(provider.createCredentialAssertionRequest(challenge: challenge),
                                          options: .preferImmediatelyAvailableCredentials)
    }
    let made = try await coordinator.perform(provider.createCredentialRegistrationRequest(challenge: challenge, name: "bob", userID: Data("b".utf8)))
    let id = try #require(made.credential as? ASAuthorizationPlatformPublicKeyCredentialRegistration).credentialID

    let again = provider.createCredentialRegistrationRequest(challenge: challenge, name: "bob", userID: Data("b".utf8))
    again.excludedCredentials = [ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: id)]
    do {
        _ = try await coordinator.perform(again)
        Issue.record("an excluded passkey on the device registered again")
    } catch ASAuthorizationError.matchedExcludedCredential {
    }

    do {
        _ = try await coordinator.perform(provider.createCredentialAssertionRequest(challenge: challenge), cancelAtOnce: true)
        Issue.record("cancel() did not end the request")
    } catch ASAuthorizationError.canceled {
    }

    host.person = PersonRequest(action: .cancel)
    await #expect(throws: ASAuthorizationError(.canceled)) {
        _ = try await coordinator.perform(provider.createCredentialAssertionRequest(challenge: challenge))
    }
    host.person = PersonRequest()

    let elsewhere = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: "other.example")
    do {
        _ = try await coordinator.perform(elsewhere.createCredentialAssertionRequest(challenge: challenge))
        Issue.record("a request for a domain the app is not associated with was answered")
    } catch {
        let error = error as NSError
        #expect(error.domain == "com.apple.AuthenticationServices.AuthorizationError")
        #expect(error.code == 1004)
        #expect(error.userInfo[NSLocalizedFailureReasonErrorKey] as? String
            == "Application with identifier TEAM123456.com.example.app is not associated with domain other.example")
    }
    #expect(coordinator.calls == 6)
}

/// A second request while one is pending on the phone (the app's button tapped twice) ends
/// `.failed` with iOS's reason, the words of iOS 26.1's ASCAuthorizationTrafficController, and the
/// first is answered.
@Test(.timeLimit(.minutes(1)))
func aSecondRequestWhileOneIsPendingFailsWithIOSsReason() async throws {
    let directory = try TemporaryDirectory()
    let phones = try Phones(in: directory.path)
    defer { AuthenticationServicesHost.current = nil }
    _ = phones
    let alice = try await registerPasskey("alice")

    let log = DelegateLog()
    let first = ASAuthorizationController.with([signInRequest("tap")], log)
    let second = ASAuthorizationController.with([signInRequest("tap again")], log)
    first.performRequests()
    second.performRequests()
    let outcomes = [await log.next(), await log.next()]
    let answered = try #require(outcomes.first { $0.controller === first })
    let refused = try #require(outcomes.first { $0.controller === second })
    #expect(try (answered.authorization.credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion)?.credentialID == alice.id)
    #expect(refused.error == ASAuthorizationError(.failed, userInfo: [
        NSLocalizedFailureReasonErrorKey: "Request already in progress for specified application identifier."]))
    #expect(log.calls == 2)
}

}

/// Apple's raw values, which apps compare against and log.
@Test func theErrorCodesHaveApplesRawValues() {
    #expect(ASAuthorizationError.Code.unknown.rawValue == 1000)
    #expect(ASAuthorizationError.Code.canceled.rawValue == 1001)
    #expect(ASAuthorizationError.Code.failed.rawValue == 1004)
    #expect(ASAuthorizationError.Code.matchedExcludedCredential.rawValue == 1006)
    #expect(ASAuthorizationError.Code.deviceNotConfiguredForPasskeyCreation.rawValue == 1010)
    #expect(ASAuthorizationError.errorDomain == "com.apple.AuthenticationServices.AuthorizationError")
}

extension PlatformPasskeyTests {
    /// A modal sign-in that finds no passkey on the phone still shows iOS's sheet (it offers a
    /// passkey from a nearby device): dismissed, the request ends `.canceled`, as every dismissed
    /// sheet does; with `.preferImmediatelyAvailableCredentials` nothing is shown and it ends
    /// `.canceled` too; a person who does not dismiss it gets `.failed` with the reason.
    @Test func aSignInWithNoPasskeyHereIsCanceledWhenThePersonDismissesTheSheet() async throws {
        let directory = try TemporaryDirectory()
        let host = try phone(in: directory.path)
        defer { AuthenticationServicesHost.current = nil }
        let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: "example.com")
        let request = provider.createCredentialAssertionRequest(challenge: Data(repeating: 1, count: 32))

        host.person = PersonRequest(action: .cancel)
        await #expect(throws: ASAuthorizationError(.canceled)) { _ = try await PasskeyCoordinator().perform(request) }
        host.person = PersonRequest()
        await #expect(throws: ASAuthorizationError(.canceled, userInfo: [NSLocalizedFailureReasonErrorKey: "No credentials available for login."])) {
            _ = try await PasskeyCoordinator().perform(request, options: .preferImmediatelyAvailableCredentials)
        }
        do {
            _ = try await PasskeyCoordinator().perform(request)
            Issue.record("a sign-in with no passkey signed")
        } catch let error as ASAuthorizationError {
            #expect(error.code == .failed && error.userInfo[NSLocalizedFailureReasonErrorKey] != nil)
        }
    }
}

extension PlatformPasskeyTests {
    /// A registration whose excluded credentials name a passkey on the phone: iOS shows its sheet
    /// and the person confirms before it answers `.matchedExcludedCredential` (measured, after
    /// 6.3 s); a person who dismisses the sheet gets `.canceled`, as for any sheet.
    @Test func anExcludedPasskeyIsAnsweredOnlyOnceThePersonConfirms() async throws {
        let directory = try TemporaryDirectory()
        let host = try phone(in: directory.path)
        defer { AuthenticationServicesHost.current = nil }
        let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: "example.com")
        let made = try await PasskeyCoordinator().perform(
            provider.createCredentialRegistrationRequest(challenge: Data(repeating: 1, count: 32), name: "alice", userID: Data("u".utf8)))
        let again = provider.createCredentialRegistrationRequest(challenge: Data(repeating: 2, count: 32), name: "alice", userID: Data("u".utf8))
        let id = try #require(made.credential as? ASAuthorizationPlatformPublicKeyCredentialRegistration).credentialID
        again.excludedCredentials = [ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: id)]

        host.person = PersonRequest(action: .cancel)
        await #expect(throws: ASAuthorizationError(.canceled)) { _ = try await PasskeyCoordinator().perform(again) }
        host.person = PersonRequest()
        await #expect(throws: ASAuthorizationError(.matchedExcludedCredential)) { _ = try await PasskeyCoordinator().perform(again) }
    }
}

extension PlatformPasskeyTests {
    /// A platform registration that asks for attestation (`.direct`, `.indirect`, `.enterprise`)
    /// fails `.failed` with iOS's reason, before anything is asked or made; `.none` makes the passkey.
    @Test func aPlatformRegistrationThatAsksForAttestationFails() async throws {
        let directory = try TemporaryDirectory()
        let host = try phone(in: directory.path)
        defer { AuthenticationServicesHost.current = nil }
        let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: "example.com")
        for kind in [ASAuthorizationPublicKeyCredentialAttestationKind.direct, .indirect, .enterprise] {
            let request = provider.createCredentialRegistrationRequest(challenge: Data(repeating: 1, count: 32), name: "alice", userID: Data("u".utf8))
            request.attestationPreference = kind
            await #expect(throws: ASAuthorizationError(.failed, userInfo: [NSLocalizedFailureReasonErrorKey: "Passkeys do not support attestation."])) {
                _ = try await PasskeyCoordinator().perform(request)
            }
        }
        #expect(try host.session.passkeys(device: "phone").isEmpty)
        let request = provider.createCredentialRegistrationRequest(challenge: Data(repeating: 1, count: 32), name: "alice", userID: Data("u".utf8))
        request.attestationPreference = .none
        _ = try await PasskeyCoordinator().perform(request)
        #expect(try host.session.passkeys(device: "phone").count == 1)
    }
}

extension PlatformPasskeyTests {
    /// The all-zero AAGUID some iPhones' registrations carry is a setting of the phone's device:
    /// `session.setProfile("icloud-keychain", aaguid:)`.
    @Test func thePhonesAAGUIDIsASetting() async throws {
        let directory = try TemporaryDirectory()
        let host = try phone(in: directory.path)
        defer { AuthenticationServicesHost.current = nil }
        try host.session.setProfile("icloud-keychain", aaguid: [UInt8](repeating: 0, count: 16), device: "phone")
        let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: "example.com")
        let made = try await PasskeyCoordinator().perform(
            provider.createCredentialRegistrationRequest(challenge: Data(repeating: 1, count: 32), name: "alice", userID: Data("u".utf8)))
        let registration = try #require(made.credential as? ASAuthorizationPlatformPublicKeyCredentialRegistration)
        let attestation = try CBORValue.decode(Array(try #require(registration.rawAttestationObject)))
        let authenticatorData = try AuthenticatorData(parsing: try #require(attestation[.text("authData")]?.bytesValue))
        #expect(authenticatorData.attestedCredentialData?.aaguid == [UInt8](repeating: 0, count: 16))
        #expect(attestation[.text("fmt")] == .text("none"))
    }
}
