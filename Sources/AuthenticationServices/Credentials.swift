import Foundation

/// What an authorization hands the app (Apple's `ASAuthorizationCredential`).
public protocol ASAuthorizationCredential: NSObjectProtocol {}

/// A public-key credential's common part.
public protocol ASPublicKeyCredential: ASAuthorizationCredential {
    /// The clientDataJSON the authenticator signed over, byte for byte.
    var rawClientDataJSON: Data { get }
    var credentialID: Data { get }
}

public protocol ASAuthorizationPublicKeyCredentialRegistration: ASPublicKeyCredential {
    /// The CBOR attestation object.
    var rawAttestationObject: Data? { get }
}

public protocol ASAuthorizationPublicKeyCredentialAssertion: ASPublicKeyCredential {
    var rawAuthenticatorData: Data! { get }
    /// The user handle the passkey was registered with.
    var userID: Data! { get }
    var signature: Data! { get }
}

/// A new passkey of this platform.
public final class ASAuthorizationPlatformPublicKeyCredentialRegistration: NSObject, ASAuthorizationPublicKeyCredentialRegistration {
    public let rawClientDataJSON: Data
    public let credentialID: Data
    public let rawAttestationObject: Data?
    public let attachment: ASAuthorizationPublicKeyCredentialAttachment

    init(rawClientDataJSON: Data, credentialID: Data, rawAttestationObject: Data?, attachment: ASAuthorizationPublicKeyCredentialAttachment) {
        self.rawClientDataJSON = rawClientDataJSON
        self.credentialID = credentialID
        self.rawAttestationObject = rawAttestationObject
        self.attachment = attachment
    }
}

/// A sign-in with a passkey of this platform.
public final class ASAuthorizationPlatformPublicKeyCredentialAssertion: NSObject, ASAuthorizationPublicKeyCredentialAssertion {
    public let rawClientDataJSON: Data
    public let credentialID: Data
    public let rawAuthenticatorData: Data!
    public let userID: Data!
    public let signature: Data!
    public let attachment: ASAuthorizationPublicKeyCredentialAttachment

    init(rawClientDataJSON: Data, credentialID: Data, rawAuthenticatorData: Data, userID: Data?, signature: Data,
         attachment: ASAuthorizationPublicKeyCredentialAttachment) {
        self.rawClientDataJSON = rawClientDataJSON
        self.credentialID = credentialID
        self.rawAuthenticatorData = rawAuthenticatorData
        self.userID = userID
        self.signature = signature
        self.attachment = attachment
    }
}

/// A successful authorization: the provider whose request succeeded and what it made.
public final class ASAuthorization: NSObject {
    public let provider: any ASAuthorizationProvider
    public let credential: any ASAuthorizationCredential

    init(provider: any ASAuthorizationProvider, credential: any ASAuthorizationCredential) {
        self.provider = provider
        self.credential = credential
    }
}
