import Foundation

/// What makes requests (Apple's `ASAuthorizationProvider`).
public protocol ASAuthorizationProvider: NSObjectProtocol {}

/// A request an ``ASAuthorizationController`` performs; made by a provider. `@unchecked Sendable`,
/// as Apple declares it and every request class (iOS 16.4, the SDK's Swift overlay): an app hands
/// a request it made to another task; it is not to be changed while performed.
open class ASAuthorizationRequest: NSObject, @unchecked Sendable {
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
/// `@unchecked Sendable`, as Apple declares it (iOS 16.4).
public final class ASAuthorizationPlatformPublicKeyCredentialDescriptor: NSObject, ASAuthorizationPublicKeyCredentialDescriptor,
    @unchecked Sendable {
    public var credentialID: Data

    public init(credentialID: Data) {
        self.credentialID = credentialID
    }
}
