import AuthenticationServices
import Foundation
import Session
import TestSupport
import Testing

/// An account manager written as Apple's documentation and sample code write one (the
/// controller's delegate and presentation context provider, a registration that sets
/// `excludedCredentials` as an optional list, an assertion request with `allowedCredentials` and
/// `.required`, the result cast with `as?`, the error matched by its code every way apps do),
/// compiled against this module unchanged and run on the phone.
private final class AccountManager: NSObject, ASAuthorizationControllerPresentationContextProviding, ASAuthorizationControllerDelegate {
    let domain = "example.com"
    var authenticationAnchor: ASPresentationAnchor?
    var credentialIDs = [Data]()
    var handled = [String]()
    var done: CheckedContinuation<Void, Never>?

    func signUpWith(userName: String, excluding: [Data]?, anchor: ASPresentationAnchor) {
        authenticationAnchor = anchor
        let publicKeyCredentialProvider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: domain)
        let registrationRequest = publicKeyCredentialProvider.createCredentialRegistrationRequest(
            challenge: Data("sign up".utf8), name: userName, userID: Data(userName.utf8))
        registrationRequest.displayName = userName.capitalized
        if #available(iOS 17.4, *) {
            registrationRequest.excludedCredentials = excluding?.map { ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: $0) }
            if let excluded = registrationRequest.excludedCredentials, excluded.isEmpty { registrationRequest.excludedCredentials = nil }
        }
        perform([registrationRequest])
    }

    func signInWith(anchor: ASPresentationAnchor) {
        authenticationAnchor = anchor
        let publicKeyCredentialProvider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: domain)
        let assertionRequest = publicKeyCredentialProvider.createCredentialAssertionRequest(challenge: Data("sign in".utf8))
        assertionRequest.allowedCredentials = credentialIDs.map { ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: $0) }
        assertionRequest.userVerificationPreference = .required
        perform([assertionRequest, ASAuthorizationPasswordProvider().createRequest()])
    }

    private func perform(_ requests: [ASAuthorizationRequest]) {
        let authController = ASAuthorizationController(authorizationRequests: requests)
        authController.delegate = self
        authController.presentationContextProvider = self
        authController.performRequests()
    }

    func authorizationController(controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization) {
        switch authorization.credential {
        case let credentialRegistration as ASAuthorizationPlatformPublicKeyCredentialRegistration:
            credentialIDs.append(credentialRegistration.credentialID)
            handled.append("registered \(credentialRegistration.rawAttestationObject != nil)")
        case let credentialAssertion as ASAuthorizationPlatformPublicKeyCredentialAssertion:
            handled.append("signed in \(credentialAssertion.userID.base64EncodedString()) \(credentialAssertion.signature.count > 0)")
        case let passwordCredential as ASPasswordCredential:
            handled.append("password \(passwordCredential.user)")
        default:
            handled.append("unknown")
        }
        done?.resume()
        done = nil
    }

    func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: Error) {
        guard let authorizationError = error as? ASAuthorizationError else { return }
        if authorizationError.code == .canceled {
            handled.append("canceled")
        } else {
            switch (error as NSError).code {
            case ASAuthorizationError.Code.matchedExcludedCredential.rawValue:
                if ASAuthorizationError.Code(rawValue: (error as NSError).code) == .matchedExcludedCredential, case ASAuthorizationError.matchedExcludedCredential = error {
                    handled.append("excluded")
                }
            default:
                handled.append("error \((error as NSError).userInfo)")
            }
        }
        done?.resume()
        done = nil
    }

    func presentationAnchor(for controller: ASAuthorizationController) -> ASPresentationAnchor {
        authenticationAnchor!
    }

    /// Runs `start` and returns once the delegate has been called.
    func run(_ start: () -> Void) async {
        await withCheckedContinuation { continuation in
            done = continuation
            start()
        }
    }
}

extension PlatformPasskeyTests {
    @Test(.timeLimit(.minutes(1)))
    func anAccountManagerWrittenAsApplesSampleCompilesAndRuns() async throws {
        let directory = try TemporaryDirectory()
        _ = try associatedPhone(in: directory.path)
        defer { AuthenticationServicesHost.current = nil }
        let manager = AccountManager(), anchor = ASPresentationAnchor()

        await manager.run { manager.signUpWith(userName: "alice", excluding: [], anchor: anchor) }
        await manager.run { manager.signUpWith(userName: "alice", excluding: manager.credentialIDs, anchor: anchor) }
        await manager.run { manager.signUpWith(userName: "bob", excluding: nil, anchor: anchor) }
        await manager.run { manager.signInWith(anchor: anchor) }
        #expect(manager.handled == ["registered true", "excluded", "registered true", "signed in \(Data("bob".utf8).base64EncodedString()) true"])

        let request = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: "example.com")
            .createCredentialRegistrationRequest(challenge: Data(), name: "n", userID: Data("n".utf8))
        #expect(request.excludedCredentials == nil)
    }
}

/// The async wrapper apps write around the delegate in Swift 6: the delegate resumes a
/// continuation with the `ASAuthorization` it is handed, which crosses to the awaiting task —
/// allowed because Apple declares the results, the requests and the providers `@unchecked
/// Sendable` (iOS 16.4).
@MainActor
private final class AsyncPasskeys: NSObject, ASAuthorizationControllerDelegate {
    private var continuation: CheckedContinuation<ASAuthorization, Error>?

    func perform(_ request: ASAuthorizationRequest) async throws -> ASAuthorization {
        try await withCheckedThrowingContinuation { continuation in
            self.continuation = continuation
            let controller = ASAuthorizationController(authorizationRequests: [request])
            controller.delegate = self
            controller.performRequests()
        }
    }

    func authorizationController(controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization) {
        continuation?.resume(returning: authorization)
        continuation = nil
    }

    func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error) {
        continuation?.resume(throwing: error)
        continuation = nil
    }
}

/// Where an app sends what the phone answered: off the main actor.
private actor Outbox {
    private(set) var sent = [Data]()

    func send(_ assertion: ASAuthorizationPlatformPublicKeyCredentialAssertion) { sent.append(assertion.credentialID) }
    func send(_ registration: ASAuthorizationPlatformPublicKeyCredentialRegistration) { sent.append(registration.credentialID) }
    func send(_ password: ASPasswordCredential) { sent.append(Data(password.user.utf8)) }
}

extension PlatformPasskeyTests {
    /// What Apple declares `@unchecked Sendable` is so here: the results cross from the delegate to
    /// an awaiting task and to an actor, and a request or descriptor made on the main actor can be
    /// handed to another task, as Swift 6 code on iOS does.
    @Test(.timeLimit(.minutes(1)))
    func theResultsAndRequestsCrossActorsAsApplesDo() async throws {
        let directory = try TemporaryDirectory()
        let host = try associatedPhone(in: directory.path)
        defer { AuthenticationServicesHost.current = nil }
        let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: "example.com")
        let passkeys = AsyncPasskeys(), outbox = Outbox()

        let made = try await passkeys.perform(provider.createCredentialRegistrationRequest(challenge: Data([1]), name: "alice", userID: Data("a".utf8)))
        let registration = try #require(made.credential as? ASAuthorizationPlatformPublicKeyCredentialRegistration)
        await outbox.send(registration)
        let request = provider.createCredentialAssertionRequest(challenge: Data([2]))
        request.allowedCredentials = [ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: registration.credentialID)]
        let signed = try await Task.detached { try await passkeys.perform(request) }.value
        await outbox.send(try #require(signed.credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion))
        host.savePassword("secret", user: "bob", domain: "example.com")
        let password = try await passkeys.perform(ASAuthorizationPasswordProvider().createRequest())
        await outbox.send(try #require(password.credential as? ASPasswordCredential))
        #expect(await outbox.sent == [registration.credentialID, registration.credentialID, Data("bob".utf8)])

        let sendables: [any Sendable] = [made, request, provider, ASAuthorizationPasswordProvider(), ASAuthorizationPasswordProvider().createRequest(),
                                         ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: Data()), registration]
        #expect(sendables.count == 7)
    }
}
