import AuthenticationServices
import Foundation
import Session
import TestSupport
import Testing
import VirtualAuthenticator

/// An account of two devices on a virtual clock — `phone` (PIN 1111) and `ipad` (PIN 2222), one
/// person's iPhone and iPad on one iCloud account — and the phone as the device the app runs on,
/// associated with example.com. The vault is a throw-away one, its store in memory.
@MainActor
struct Phones {
    let session: Session
    let clock: VirtualClock
    let phone: AuthenticationServicesHost
    let ipad: AuthenticationServicesHost

    init(in directory: String) throws {
        clock = VirtualClock(start: 1_800_000_000_000)
        var phonePIN = Array("1111".utf8), ipadPIN = Array("2222".utf8), passphrase = Array("p".utf8)
        session = try Session.create(
            AccountSpec(path: directory + "/vault", passphrase: SecureBytes(consuming: &passphrase), kdf: .min,
                        devices: [AccountSpec.DeviceSpec(name: "phone", pin: SecureBytes(consuming: &phonePIN)),
                                  AccountSpec.DeviceSpec(name: "ipad", pin: SecureBytes(consuming: &ipadPIN))],
                        keeping: .throwAway(storeInMemory: true), clock: clock, seed: 35),
            people: KnownPeople(pins: ["phone": "1111", "ipad": "2222"], timeouts: .atOnce))
        phone = AuthenticationServicesHost(session: session, device: "phone", applicationIdentifier: "TEAM123456.com.example.app",
                                           associatedDomains: ["example.com"])
        ipad = AuthenticationServicesHost(session: session, device: "ipad", applicationIdentifier: "TEAM123456.com.example.app",
                                          associatedDomains: ["example.com"])
        AuthenticationServicesHost.current = phone
    }

    /// Moves the account's clock by `milliseconds`.
    func advance(_ milliseconds: UInt64) throws {
        try session.clock(.advance(milliseconds: milliseconds))
    }
}

/// How a controller's flow ended, as its delegate heard it (no controller: the delegate heard
/// nothing before the test's time limit canceled the wait).
struct Outcome: @unchecked Sendable {
    struct NothingHeard: Error {}

    let controller: ASAuthorizationController?
    let result: Result<ASAuthorization, any Error>

    var authorization: ASAuthorization {
        get throws { try result.get() }
    }

    var error: ASAuthorizationError? {
        if case .failure(let error) = result { return error as? ASAuthorizationError }
        return nil
    }
}

/// A delegate that keeps what it is told, in order, for a test to await: the app's delegate as a
/// test sees it. `then` runs in the delegate call, as an app's code reacts there.
@MainActor
final class DelegateLog: NSObject, ASAuthorizationControllerDelegate {
    private var heard = [Outcome]()
    private var waiting: CheckedContinuation<Outcome, Never>?
    var then: ((Outcome) -> Void)?
    private(set) var calls = 0

    /// The next outcome the delegate hears; ``Outcome/NothingHeard`` when the test's time limit
    /// cancels the wait first.
    func next() async -> Outcome {
        if !heard.isEmpty { return heard.removeFirst() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { waiting = $0 }
        } onCancel: {
            Task { @MainActor in self.giveUp() }
        }
    }

    private func giveUp() {
        guard let waiting else { return }
        self.waiting = nil
        waiting.resume(returning: Outcome(controller: nil, result: .failure(Outcome.NothingHeard())))
    }

    func authorizationController(controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization) {
        hear(Outcome(controller: controller, result: .success(authorization)))
    }

    func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error) {
        hear(Outcome(controller: controller, result: .failure(error)))
    }

    private func hear(_ outcome: Outcome) {
        calls += 1
        then?(outcome)
        if let waiting {
            self.waiting = nil
            waiting.resume(returning: outcome)
        } else {
            heard.append(outcome)
        }
    }
}

extension ASAuthorizationController {
    /// A controller of `requests` whose delegate is `log`.
    @MainActor
    static func with(_ requests: [ASAuthorizationRequest], _ log: DelegateLog) -> ASAuthorizationController {
        let controller = ASAuthorizationController(authorizationRequests: requests)
        controller.delegate = log
        return controller
    }
}

/// A passkey registered on the current host's device through a modal request, and the key its
/// attestation carries.
@MainActor
func registerPasskey(_ name: String, rpID: String = "example.com") async throws -> (id: Data, spki: [UInt8]) {
    let log = DelegateLog()
    let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: rpID)
    let controller = ASAuthorizationController.with([provider.createCredentialRegistrationRequest(
        challenge: Data("make \(name)".utf8), name: name, userID: Data("id-\(name)".utf8))], log)
    controller.performRequests()
    let made = try #require(try await log.next().authorization.credential as? ASAuthorizationPlatformPublicKeyCredentialRegistration)
    let attestation = try CBORValue.decode(Array(try #require(made.rawAttestationObject)))
    let authenticatorData = try AuthenticatorData(parsing: try #require(attestation[.text("authData")]?.bytesValue))
    return (made.credentialID, try #require(authenticatorData.attestedCredentialData).publicKey.subjectPublicKeyInfo)
}

/// A sign-in request of example.com.
func signInRequest(_ challenge: String = "sign-in") -> ASAuthorizationPlatformPublicKeyCredentialAssertionRequest {
    ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: "example.com").createCredentialAssertionRequest(challenge: Data(challenge.utf8))
}
