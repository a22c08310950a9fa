import Foundation

/// What makes requests (Apple's `ASAuthorizationProvider`).
public protocol ASAuthorizationProvider: NSObjectProtocol {}

/// A request an ``ASAuthorizationController`` performs; made by a provider.
open class ASAuthorizationRequest: NSObject {
    /// The provider that made this request.
    public let provider: any ASAuthorizationProvider

    init(provider: any ASAuthorizationProvider) {
        self.provider = provider
    }
}

/// A credential a request can name (Apple's `ASAuthorizationPublicKeyCredentialDescriptor`).
public protocol ASAuthorizationPublicKeyCredentialDescriptor: NSObjectProtocol {
    var credentialID: Data { get set }
}

/// A passkey of this platform named in `excludedCredentials` or `allowedCredentials`.
public final class ASAuthorizationPlatformPublicKeyCredentialDescriptor: NSObject, ASAuthorizationPublicKeyCredentialDescriptor {
    public var credentialID: Data

    public init(credentialID: Data) {
        self.credentialID = credentialID
    }
}
