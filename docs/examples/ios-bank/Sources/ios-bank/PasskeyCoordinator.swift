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

/// How a passkey request ended when it did not succeed, in the app's terms.
enum PasskeyError: Error, Sendable, CustomStringConvertible {
    /// The person dismissed the sheet: not an error to show.
    case userCanceled
    /// This device already holds one of the account's passkeys.
    case alreadyRegistered
    /// No passkey for this account here: fall back to the password.
    case noPasskey
    /// The request was refused; iOS says why in the failure reason.
    case failed(reason: String)
    case unexpected(code: Int, reason: String)

    var description: String {
        switch self {
        case .userCanceled: "canceled"
        case .alreadyRegistered: "this device already has a passkey for this account"
        case .noPasskey: "no passkey on this device"
        case .failed(let reason): "failed: \(reason)"
        case .unexpected(let code, let reason): "error \(code): \(reason)"
        }
    }
}

/// Performs one passkey request through ASAuthorizationController and hands its outcome back to
/// an awaiting caller, on the main actor, as iOS apps bridge the delegate to async code.
@MainActor
final class PasskeyCoordinator: NSObject, ASAuthorizationControllerDelegate, ASAuthorizationControllerPresentationContextProviding {
    private enum Outcome: Sendable {
        case created(CreatedPasskey)
        case signed(PasskeySignature)
    }

    private var continuation: CheckedContinuation<Outcome, any Error>?

    func register(_ request: ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest) async throws -> CreatedPasskey {
        guard case .created(let passkey) = try await perform(request) else { throw PasskeyError.unexpected(code: 0, reason: "not a registration") }
        return passkey
    }

    func signIn(_ request: ASAuthorizationPlatformPublicKeyCredentialAssertionRequest) async throws -> PasskeySignature {
        guard case .signed(let signature) = try await perform(request) else { throw PasskeyError.unexpected(code: 0, reason: "not an assertion") }
        return signature
    }

    private func perform(_ request: ASAuthorizationRequest) async throws -> Outcome {
        try await withCheckedThrowingContinuation { continuation in
            self.continuation = continuation
            let controller = ASAuthorizationController(authorizationRequests: [request])
            controller.delegate = self
            controller.presentationContextProvider = self
            controller.performRequests()
        }
    }

    func presentationAnchor(for controller: ASAuthorizationController) -> ASPresentationAnchor {
        ASPresentationAnchor()
    }

    func authorizationController(controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization) {
        switch authorization.credential {
        case let registration as ASAuthorizationPlatformPublicKeyCredentialRegistration:
            guard let attestationObject = registration.rawAttestationObject else {
                return finish(.failure(PasskeyError.unexpected(code: 0, reason: "no attestation object")))
            }
            finish(.success(.created(CreatedPasskey(credentialID: registration.credentialID, rawClientDataJSON: registration.rawClientDataJSON,
                                                    rawAttestationObject: attestationObject, attachment: Self.name(registration.attachment)))))
        case let assertion as ASAuthorizationPlatformPublicKeyCredentialAssertion:
            finish(.success(.signed(PasskeySignature(credentialID: assertion.credentialID, rawClientDataJSON: assertion.rawClientDataJSON,
                                                     rawAuthenticatorData: assertion.rawAuthenticatorData, signature: assertion.signature,
                                                     userID: assertion.userID, attachment: Self.name(assertion.attachment)))))
        default:
            finish(.failure(PasskeyError.unexpected(code: 0, reason: "an unexpected credential")))
        }
    }

    /// The error switch: what each of Apple's codes means for this app.
    func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error) {
        let reason = (error as NSError).userInfo[NSLocalizedFailureReasonErrorKey] as? String ?? error.localizedDescription
        let passkeyError: PasskeyError
        switch (error as? ASAuthorizationError)?.code {
        case .canceled: passkeyError = .userCanceled
        case .matchedExcludedCredential: passkeyError = .alreadyRegistered
        case .notHandled: passkeyError = .noPasskey
        case .failed: passkeyError = .failed(reason: reason)
        default: passkeyError = .unexpected(code: (error as NSError).code, reason: reason)
        }
        finish(.failure(passkeyError))
    }

    private func finish(_ outcome: Result<Outcome, PasskeyError>) {
        continuation?.resume(with: outcome.mapError { $0 as any Error })
        continuation = nil
    }

    /// WebAuthn's name of the attachment (`authenticatorAttachment`).
    private static func name(_ attachment: ASAuthorizationPublicKeyCredentialAttachment) -> String {
        attachment == .platform ? "platform" : "cross-platform"
    }
}
