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

/// A new passkey of this platform. Its members are constants: `@unchecked Sendable`, as Apple
/// declares it (iOS 16.4), so an app hands it to the task that sends it to the server.
public final class ASAuthorizationPlatformPublicKeyCredentialRegistration: NSObject, ASAuthorizationPublicKeyCredentialRegistration,
    @unchecked Sendable {
    public let rawClientDataJSON: Data
    public let credentialID: Data
    public let rawAttestationObject: Data?
    public let attachment: ASAuthorizationPublicKeyCredentialAttachment
    /// Whether the passkey can keep a large blob, when the request asked (iOS 17).
    public let largeBlob: ASAuthorizationPublicKeyCredentialLargeBlobRegistrationOutput?
    /// Whether the passkey supports PRF, and the outputs for the request's inputs (iOS 18).
    public let prf: ASAuthorizationPublicKeyCredentialPRFRegistrationOutput?

    init(rawClientDataJSON: Data, credentialID: Data, rawAttestationObject: Data?, attachment: ASAuthorizationPublicKeyCredentialAttachment,
         largeBlob: ASAuthorizationPublicKeyCredentialLargeBlobRegistrationOutput? = nil,
         prf: ASAuthorizationPublicKeyCredentialPRFRegistrationOutput? = nil) {
        self.rawClientDataJSON = rawClientDataJSON
        self.credentialID = credentialID
        self.rawAttestationObject = rawAttestationObject
        self.attachment = attachment
        self.largeBlob = largeBlob
        self.prf = prf
    }
}

/// A sign-in with a passkey of this platform. Its members are constants: `@unchecked Sendable`,
/// as Apple declares it (iOS 16.4).
public final class ASAuthorizationPlatformPublicKeyCredentialAssertion: NSObject, ASAuthorizationPublicKeyCredentialAssertion,
    @unchecked Sendable {
    public let rawClientDataJSON: Data
    public let credentialID: Data
    public let rawAuthenticatorData: Data!
    public let userID: Data!
    public let signature: Data!
    public let attachment: ASAuthorizationPublicKeyCredentialAttachment
    /// The blob read, or whether the write was stored, when the request asked (iOS 17).
    public let largeBlob: ASAuthorizationPublicKeyCredentialLargeBlobAssertionOutput?
    /// The PRF outputs, when the request gave inputs for the passkey that signed (iOS 18).
    public let prf: ASAuthorizationPublicKeyCredentialPRFAssertionOutput?

    init(rawClientDataJSON: Data, credentialID: Data, rawAuthenticatorData: Data, userID: Data?, signature: Data,
         attachment: ASAuthorizationPublicKeyCredentialAttachment,
         largeBlob: ASAuthorizationPublicKeyCredentialLargeBlobAssertionOutput? = nil,
         prf: ASAuthorizationPublicKeyCredentialPRFAssertionOutput? = nil) {
        self.rawClientDataJSON = rawClientDataJSON
        self.credentialID = credentialID
        self.rawAuthenticatorData = rawAuthenticatorData
        self.userID = userID
        self.signature = signature
        self.attachment = attachment
        self.largeBlob = largeBlob
        self.prf = prf
    }
}

/// A successful authorization: the provider whose request succeeded and what it made. Both are
/// constants: `@unchecked Sendable`, as Apple declares it (iOS 16.4), so a delegate resumes a
/// continuation with it and the awaiting task receives it.
public final class ASAuthorization: NSObject, @unchecked Sendable {
    public let provider: any ASAuthorizationProvider
    public let credential: any ASAuthorizationCredential

    init(provider: any ASAuthorizationProvider, credential: any ASAuthorizationCredential) {
        self.provider = provider
        self.credential = credential
    }
}
