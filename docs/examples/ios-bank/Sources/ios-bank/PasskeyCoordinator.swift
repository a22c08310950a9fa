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

    /// One JSON object: `{"code", "domain", "handling", "reason"?}`.
    var description: String {
        struct Fields: Encodable { let code: Int; let domain: String; let handling: String; let reason: String? }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = try? encoder.encode(Fields(code: code, domain: domain, handling: handling.rawValue, reason: reason))
        return json.map { String(decoding: $0, as: UTF8.self) } ?? "{}"
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
        guard case .created(let passkey) = try await perform(request, options: []) else { throw Self.notExpected }
        return passkey
    }

    /// `immediatelyAvailableOnly`: only a passkey already on this device, and no sheet without one
    /// (`.preferImmediatelyAvailableCredentials`).
    func signIn(_ request: ASAuthorizationPlatformPublicKeyCredentialAssertionRequest,
                immediatelyAvailableOnly: Bool = false) async throws -> PasskeySignature {
        guard case .signed(let signature) = try await perform(request, options: immediatelyAvailableOnly ? .preferImmediatelyAvailableCredentials : [])
        else { throw Self.notExpected }
        return signature
    }

    private func perform(_ request: ASAuthorizationRequest, options: ASAuthorizationController.RequestOptions) async throws -> Outcome {
        try await withCheckedThrowingContinuation { continuation in
            self.continuation = continuation
            let controller = ASAuthorizationController(authorizationRequests: [request])
            controller.delegate = self
            controller.presentationContextProvider = self
            controller.performRequests(options: options)
        }
    }

    func presentationAnchor(for controller: ASAuthorizationController) -> ASPresentationAnchor {
        ASPresentationAnchor()
    }

    func authorizationController(controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization) {
        switch authorization.credential {
        case let registration as ASAuthorizationPlatformPublicKeyCredentialRegistration:
            guard let attestationObject = registration.rawAttestationObject else { return finish(.failure(Self.notExpected)) }
            finish(.success(.created(CreatedPasskey(credentialID: registration.credentialID, rawClientDataJSON: registration.rawClientDataJSON,
                                                    rawAttestationObject: attestationObject, attachment: Self.name(registration.attachment)))))
        case let assertion as ASAuthorizationPlatformPublicKeyCredentialAssertion:
            finish(.success(.signed(PasskeySignature(credentialID: assertion.credentialID, rawClientDataJSON: assertion.rawClientDataJSON,
                                                     rawAuthenticatorData: assertion.rawAuthenticatorData, signature: assertion.signature,
                                                     userID: assertion.userID, attachment: Self.name(assertion.attachment)))))
        default:
            finish(.failure(Self.notExpected))
        }
    }

    /// The error switch of the guide's coordinator, a branch for every code it names. For a
    /// passkey request iOS only ever answers canceled, failed and matchedExcludedCredential (no
    /// passkey here with .preferImmediatelyAvailableCredentials is canceled too): the
    /// invalidResponse, notHandled, unknown and notInteractive branches are never taken.
    func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error) {
        let authError = error as? ASAuthorizationError
        let handling: PasskeyFailure.Handling
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
        finish(.failure(PasskeyFailure(handling: handling, code: nsError.code, domain: nsError.domain,
                                       reason: nsError.userInfo[NSLocalizedFailureReasonErrorKey] as? String)))
    }

    private func finish(_ outcome: Result<Outcome, PasskeyFailure>) {
        continuation?.resume(with: outcome.mapError { $0 as any Error })
        continuation = nil
    }

    /// A credential of a kind the app did not ask for (never, for the requests it makes).
    private static let notExpected = PasskeyFailure(handling: .invalidResponse, code: 0, domain: "ios-bank", reason: "an unexpected credential")

    /// WebAuthn's name of the attachment (`authenticatorAttachment`).
    private static func name(_ attachment: ASAuthorizationPublicKeyCredentialAttachment) -> String {
        attachment == .platform ? "platform" : "cross-platform"
    }
}
