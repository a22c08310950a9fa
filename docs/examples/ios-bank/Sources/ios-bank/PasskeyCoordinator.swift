import AuthenticationServices
import Foundation

/// A new passkey, as the app sends it to the bank.
struct CreatedPasskey: Sendable {
    let credentialID: Data
    let rawClientDataJSON: Data
    let rawAttestationObject: Data
    let attachment: String
}

/// A sign-in with a passkey, as the app sends it to the bank.
struct PasskeySignature: Sendable {
    let credentialID: Data
    let rawClientDataJSON: Data
    let rawAuthenticatorData: Data
    var signature: Data
    let userID: Data?
    let attachment: String
}

/// A passkey request that did not succeed: the branch of the app's error switch it took, and the
/// error as the delegate was handed it (its code, domain and `NSLocalizedFailureReason`).
struct PasskeyFailure: Error, Sendable, CustomStringConvertible {
    /// The app's handlers, one per branch of the switch, as the guide's coordinator has them.
    enum Handling: String, Sendable {
        case userCanceled, authenticationFailed, invalidResponse, noPasskeyFound, unknownError, nonInteractive, duplicateCredential
    }

    let handling: Handling
    let code: Int
    let domain: String
    let reason: String?

    /// The error switch of the guide's coordinator, a branch for every code it names. For a
    /// passkey request iOS only ever answers canceled, failed and matchedExcludedCredential (no
    /// passkey here with .preferImmediatelyAvailableCredentials is canceled too), and iOS 26
    /// deviceNotConfiguredForPasskeyCreation, which the guide's switch meets in its default
    /// branch: the invalidResponse, notHandled, unknown and notInteractive branches are never taken.
    init(_ error: any Error) {
        let authError = error as? ASAuthorizationError
        switch authError?.code {
        case .canceled: handling = .userCanceled
        case .failed: handling = .authenticationFailed
        case .invalidResponse: handling = .invalidResponse
        case .notHandled: handling = .noPasskeyFound
        case .unknown: handling = .unknownError
        case .notInteractive: handling = .nonInteractive
        case .matchedExcludedCredential: handling = .duplicateCredential
        default: handling = .unknownError
        }
        let nsError = error as NSError
        code = nsError.code
        domain = nsError.domain
        reason = nsError.userInfo[NSLocalizedFailureReasonErrorKey] as? String
    }

    init(handling: Handling, code: Int, domain: String, reason: String?) {
        self.handling = handling
        self.code = code
        self.domain = domain
        self.reason = reason
    }

    /// One JSON object: `{"code", "domain", "handling", "reason"?}`.
    var description: String {
        struct Fields: Encodable { let code: Int; let domain: String; let handling: String; let reason: String? }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = try? encoder.encode(Fields(code: code, domain: domain, handling: handling.rawValue, reason: reason))
        return json.map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// What the app does for each branch of its switch (the guide's handlers).
    var whatTheAppDoes: String {
        switch handling {
        case .userCanceled: "dismissed: nothing is shown, the AutoFill sign-in resumes"
        case .authenticationFailed: "shows: \(reason ?? "the request failed")"
        case .duplicateCredential: "shows: this device already has a passkey for this account"
        case .noPasskeyFound: "shows the password form"
        case .invalidResponse, .unknownError, .nonInteractive: "shows: something went wrong (\(code))"
        }
    }

    /// A credential of a kind the app did not ask for (never, for the requests it makes).
    static let notExpected = PasskeyFailure(handling: .invalidResponse, code: 0, domain: "ios-bank", reason: "an unexpected credential")
}

/// What a request the app performed answered.
enum Answer: Sendable {
    case created(CreatedPasskey)
    case signed(PasskeySignature)
    /// A password saved in iCloud Keychain, picked in a sheet that also offered passkeys.
    case password(user: String, password: String)

    /// The result the delegate was handed, as the app sends it on.
    init(_ authorization: ASAuthorization) throws {
        switch authorization.credential {
        case let registration as ASAuthorizationPlatformPublicKeyCredentialRegistration:
            guard let attestationObject = registration.rawAttestationObject else { throw PasskeyFailure.notExpected }
            self = .created(CreatedPasskey(credentialID: registration.credentialID, rawClientDataJSON: registration.rawClientDataJSON,
                                           rawAttestationObject: attestationObject, attachment: Self.name(registration.attachment)))
        case let assertion as ASAuthorizationPlatformPublicKeyCredentialAssertion:
            self = .signed(PasskeySignature(credentialID: assertion.credentialID, rawClientDataJSON: assertion.rawClientDataJSON,
                                            rawAuthenticatorData: assertion.rawAuthenticatorData, signature: assertion.signature,
                                            userID: assertion.userID, attachment: Self.name(assertion.attachment)))
        case let password as ASPasswordCredential:
            self = .password(user: password.user, password: password.password)
        default:
            throw PasskeyFailure.notExpected
        }
    }

    /// WebAuthn's name of the attachment (`authenticatorAttachment`).
    private static func name(_ attachment: ASAuthorizationPublicKeyCredentialAttachment) -> String {
        attachment == .platform ? "platform" : "cross-platform"
    }
}

/// Performs one request through ASAuthorizationController and hands its outcome to an awaiting
/// caller, on the main actor, as iOS apps bridge the delegate to async code. A coordinator per
/// request: `start` performs at once, `answer()` awaits what the delegate is told.
@MainActor
final class PasskeyCoordinator: NSObject, ASAuthorizationControllerDelegate, ASAuthorizationControllerPresentationContextProviding {
    private var controller: ASAuthorizationController?
    private var outcome: Result<Answer, any Error>?
    private var continuation: CheckedContinuation<Answer, any Error>?

    func register(_ request: ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest) async throws -> CreatedPasskey {
        start([request])
        guard case .created(let passkey) = try await answer() else { throw PasskeyFailure.notExpected }
        return passkey
    }

    /// `immediatelyAvailableOnly`: only a passkey already on this device, and no sheet without one
    /// (`.preferImmediatelyAvailableCredentials`).
    func signIn(_ request: ASAuthorizationPlatformPublicKeyCredentialAssertionRequest,
                immediatelyAvailableOnly: Bool = false) async throws -> PasskeySignature {
        start([request], options: immediatelyAvailableOnly ? .preferImmediatelyAvailableCredentials : [])
        return try await signature()
    }

    /// Performs `requests` in one controller now: the controller has asked the system before this returns.
    func start(_ requests: [ASAuthorizationRequest], options: ASAuthorizationController.RequestOptions = []) {
        outcome = nil
        let controller = ASAuthorizationController(authorizationRequests: requests)
        controller.delegate = self
        controller.presentationContextProvider = self
        self.controller = controller
        controller.performRequests(options: options)
    }

    /// What the request `start` performed answered, once the delegate is told.
    func answer() async throws -> Answer {
        if let outcome { return try outcome.get() }
        return try await withCheckedThrowingContinuation { continuation = $0 }
    }

    /// The sign-in the request `start` performed answered.
    func signature() async throws -> PasskeySignature {
        guard case .signed(let signature) = try await answer() else { throw PasskeyFailure.notExpected }
        return signature
    }

    func presentationAnchor(for controller: ASAuthorizationController) -> ASPresentationAnchor {
        ASPresentationAnchor()
    }

    func authorizationController(controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization) {
        finish(Result { try Answer(authorization) })
    }

    func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error) {
        finish(.failure(PasskeyFailure(error)))
    }

    private func finish(_ outcome: Result<Answer, any Error>) {
        controller = nil
        if let continuation {
            self.continuation = nil
            continuation.resume(with: outcome)
        } else {
            self.outcome = outcome
        }
    }
}
