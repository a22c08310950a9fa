import Foundation

/// Makes passkey requests for one relying party: the platform (iCloud Keychain on iOS; here the
/// device of ``AuthenticationServicesHost``). `Sendable` (its one property is a constant), as
/// Apple declares it `@unchecked Sendable` (iOS 16.4).
public final class ASAuthorizationPlatformPublicKeyCredentialProvider: NSObject, ASAuthorizationProvider, @unchecked Sendable {
    /// The RP ID every request of this provider is for; the origin iOS reports is `https://` + it.
    public let relyingPartyIdentifier: String

    public init(relyingPartyIdentifier: String) {
        self.relyingPartyIdentifier = relyingPartyIdentifier
    }

    /// A request to register a new passkey for the user `name`, whose user handle is `userID`.
    public func createCredentialRegistrationRequest(challenge: Data, name: String, userID: Data)
        -> ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest {
        ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest(provider: self, challenge: challenge, name: name, userID: userID)
    }

    /// The same, in a style (iOS 18): `.conditional` registers after a password sign-in without UI.
    public func createCredentialRegistrationRequest(
        challenge: Data, name: String, userID: Data,
        requestStyle: ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest.RequestStyle
    ) -> ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest {
        let request = createCredentialRegistrationRequest(challenge: challenge, name: name, userID: userID)
        request.requestStyle = requestStyle
        return request
    }

    /// A request to sign in with an existing passkey.
    public func createCredentialAssertionRequest(challenge: Data) -> ASAuthorizationPlatformPublicKeyCredentialAssertionRequest {
        ASAuthorizationPlatformPublicKeyCredentialAssertionRequest(provider: self, challenge: challenge)
    }
}
