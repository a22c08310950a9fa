import AuthenticationServices
import Foundation

/// The guide's coordinator: performs one passkey request at a time through
/// ASAuthorizationController, hands the outcome to the awaiting caller, and reacts to each error
/// code as the guide's error-handling chapter does. Not isolated itself (the upgrade manager makes
/// one from any context); what touches the controller runs on the main actor.
final class AuthenticationCoordinator: NSObject {
    /// What the app shows after a request, as the handlers leave it.
    enum Screen: Equatable {
        case idle, signedIn, passwordLogin, alternativeLoginOptions, conditionalSignIn
        case error(String)
    }

    private(set) var screen: Screen = .idle
    /// The RP ID of requests that name none (the app's domain).
    var relyingPartyIdentifier = "example.com"
    var provider: ASAuthorizationPlatformPublicKeyCredentialProvider {
        ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: relyingPartyIdentifier)
    }
    let server = AuthAPIClient.shared
    @MainActor var sessionManager: SessionManager { .shared }

    private var pending: CheckedContinuation<ASAuthorization, any Error>?
    /// The AutoFill-assisted request waiting under the login field, if any.
    private var autoFillController: ASAuthorizationController?
    /// Whether the delegate call being handled is the AutoFill request's, which no caller awaits.
    private var answeringAutoFill = false

    /// Registers a passkey for `username` (user handle `userID`) with the server's `challenge`.
    @MainActor
    func registerPasskey(username: String, userID: Data, challenge: Data, rpID: String,
                         excluding excluded: [Data] = []) async throws -> PasskeyRegistration {
        let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: rpID)
        let request = provider.createCredentialRegistrationRequest(challenge: challenge, name: username, userID: userID)
        request.excludedCredentials = excluded.map { ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: $0) }
        let authorization = try await perform(request, options: [])
        guard let credential = authorization.credential as? ASAuthorizationPlatformPublicKeyCredentialRegistration,
              let attestationObject = credential.rawAttestationObject else { throw PasskeyError.invalidResponse }
        return PasskeyRegistration(credentialID: credential.credentialID, rawClientDataJSON: credential.rawClientDataJSON,
                                   rawAttestationObject: attestationObject)
    }

    /// Signs in with a passkey for `rpID`: one of `allowedCredentialIDs` (none: any of the
    /// device's), without UI when `immediatelyAvailableOnly` and none is on the device.
    @MainActor
    func signIn(challenge: Data, rpID: String, allowedCredentialIDs: [Data] = [],
                userVerification: ASAuthorizationPublicKeyCredentialUserVerificationPreference = .preferred,
                immediatelyAvailableOnly: Bool = false) async throws -> PasskeyAssertion {
        let request = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: rpID).createCredentialAssertionRequest(challenge: challenge)
        request.allowedCredentials = allowedCredentialIDs.map { ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: $0) }
        request.userVerificationPreference = userVerification
        let authorization = try await perform(request, options: immediatelyAvailableOnly ? .preferImmediatelyAvailableCredentials : [])
        guard let credential = authorization.credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion else {
            throw PasskeyError.invalidResponse
        }
        screen = .signedIn
        return PasskeyAssertion(credentialID: credential.credentialID, rawClientDataJSON: credential.rawClientDataJSON,
                                rawAuthenticatorData: credential.rawAuthenticatorData, signature: credential.signature, userID: credential.userID)
    }

    /// The AutoFill sign-in, resumed after a dismissed sheet: a discoverable sign-in request of
    /// the server's challenge, performed as an AutoFill-assisted request, so that the login
    /// field's QuickType bar offers the device's passkeys again. It returns at once; the passkey
    /// the person picks reaches the delegate, which sends it to the server. Without a challenge
    /// (the server not reached) the screen stays as it is.
    @MainActor
    func beginConditionalSignIn() async {
        guard let challenge = try? await server.beginPasskeySignIn() else { return }
        let controller = ASAuthorizationController(authorizationRequests: [provider.createCredentialAssertionRequest(challenge: challenge)])
        controller.delegate = self
        controller.presentationContextProvider = self
        autoFillController = controller
        screen = .conditionalSignIn
        controller.performAutoFillAssistedRequests()
    }

    @MainActor
    private func perform(_ request: ASAuthorizationRequest, options: ASAuthorizationController.RequestOptions) async throws -> ASAuthorization {
        try await withCheckedThrowingContinuation { continuation in
            pending = continuation
            let controller = ASAuthorizationController(authorizationRequests: [request])
            controller.delegate = self
            controller.presentationContextProvider = self
            controller.performRequests(options: options)
        }
    }

    private func finish(_ outcome: Result<ASAuthorization, PasskeyError>) {
        // The AutoFill request's outcome is no answer to the modal request a caller awaits.
        guard !answeringAutoFill else { return }
        pending?.resume(with: outcome.mapError { $0 as any Error })
        pending = nil
    }

    /// The passkey the person picked in the QuickType bar, sent to the server, which signs them in.
    @MainActor
    private func finishConditionalSignIn(_ authorization: ASAuthorization) {
        guard let credential = authorization.credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion else { return }
        let assertion = PasskeyAssertion(credentialID: credential.credentialID, rawClientDataJSON: credential.rawClientDataJSON,
                                         rawAuthenticatorData: credential.rawAuthenticatorData, signature: credential.signature,
                                         userID: credential.userID)
        Task {
            do {
                try await server.finishPasskeySignIn(assertion)
                screen = .signedIn
            } catch {
                screen = .error(error.localizedDescription)
            }
        }
    }
}

extension AuthenticationCoordinator: ASAuthorizationControllerPresentationContextProviding {
    func presentationAnchor(for controller: ASAuthorizationController) -> ASPresentationAnchor {
        ASPresentationAnchor()
    }
}

// The guide's switch, every code it names with its handler. For passkey requests iOS answers only
// canceled, failed and matchedExcludedCredential ("no passkey" with
// .preferImmediatelyAvailableCredentials is canceled): the other branches never run.
extension AuthenticationCoordinator: ASAuthorizationControllerDelegate {
    func authorizationController(controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization) {
        if controller === autoFillController {
            autoFillController = nil
            return finishConditionalSignIn(authorization)
        }
        finish(.success(authorization))
    }

    func authorizationController(
        controller: ASAuthorizationController,
        didCompleteWithError error: Error
    ) {
        answeringAutoFill = controller === autoFillController
        if answeringAutoFill { autoFillController = nil }
        defer { answeringAutoFill = false }
        let authError = error as? ASAuthorizationError

        switch authError?.code {
        case .canceled:
            handleUserCanceled()
        case .failed:
            handleAuthenticationFailed(error)
        case .invalidResponse:
            handleInvalidResponse(error)
        case .notHandled:
            handleNoPasskeyFound()
        case .unknown:
            handleUnknownError(error)
        case .notInteractive:
            handleNonInteractiveError()
        case .matchedExcludedCredential:
            handleDuplicateCredential()
        default:
            handleUnknownError(error)
        }
    }

    private func handleUserCanceled() {
        // Not an error to show: the AutoFill sign-in takes over again.
        finish(.failure(.userCancelled))
        Task { await beginConditionalSignIn() }
    }

    private func handleAuthenticationFailed(_ error: Error) {
        let reason = (error as NSError).userInfo[NSLocalizedFailureReasonErrorKey] as? String ?? error.localizedDescription
        screen = .error(reason)
        finish(.failure(.authenticationFailed(reason: reason)))
    }

    private func handleInvalidResponse(_ error: Error) {
        screen = .error("The response could not be read.")
        finish(.failure(.invalidResponse))
    }

    private func handleNoPasskeyFound() {
        finish(.failure(.noPasskeyFound))
        showPasswordLoginForm()
    }

    private func handleUnknownError(_ error: Error) {
        screen = .error(error.localizedDescription)
        finish(.failure(.unknown(code: (error as NSError).code)))
    }

    private func handleNonInteractiveError() {
        finish(.failure(.notInteractive))
    }

    private func handleDuplicateCredential() {
        screen = .error("This device already has a passkey for this account.")
        finish(.failure(.duplicateCredential))
    }

    private func showPasswordLoginForm() {
        screen = .passwordLogin
    }
}

/// The edge cases of the guide's error-handling chapter.
extension AuthenticationCoordinator {
    enum UpgradeError: Error { case notAuthenticated }

    /// A device just set up: its passkeys may not have synced from iCloud Keychain yet.
    @MainActor
    func handleFirstLaunchAfterReset() async {
        if !isPasskeyAvailable() {
            showAlternativeLoginOptions()
        }
    }

    /// Whether a passkey for this app is known to be on this device (the app remembers it).
    func isPasskeyAvailable() -> Bool {
        UserDefaults.standard.string(forKey: "passkeyCredentialID") != nil
    }

    @MainActor
    func showAlternativeLoginOptions() {
        screen = .alternativeLoginOptions
    }

    /// A passkey added while signed in with the password, which the server keeps.
    @MainActor
    func upgradeToPasskey() async throws {
        guard sessionManager.isAuthenticated else { throw UpgradeError.notAuthenticated }
        let registration = try await registerNewPasskey()
        try await server.addPasskeyToAccount(registration, keepPassword: true)
        UserDefaults.standard.set(true, forKey: "passkeyUpgraded")
    }

    /// Registers a passkey for the signed-in user; the passkeys the account has are excluded, so
    /// registering again on a device that holds one fails `.matchedExcludedCredential`.
    @MainActor @discardableResult
    func registerNewPasskey(excludingExisting: [Data] = []) async throws -> PasskeyRegistration {
        let begun = try await server.beginPasskeyRegistration(username: sessionManager.username)
        guard let challenge = Data(base64URLEncoded: begun.challenge), let userID = Data(base64URLEncoded: begun.userID) else {
            throw PasskeyError.invalidResponse
        }
        let request = provider.createCredentialRegistrationRequest(challenge: challenge, name: sessionManager.username, userID: userID)
        request.excludedCredentials = excludingExisting.map {
            ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: $0)
        }
        guard let credential = try await perform(request, options: []).credential as? ASAuthorizationPlatformPublicKeyCredentialRegistration,
              let attestationObject = credential.rawAttestationObject else { throw PasskeyError.invalidResponse }
        return PasskeyRegistration(credentialID: credential.credentialID, rawClientDataJSON: credential.rawClientDataJSON,
                                   rawAttestationObject: attestationObject)
    }
}
