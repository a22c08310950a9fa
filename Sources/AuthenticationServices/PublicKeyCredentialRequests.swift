import Foundation

/// What every public-key registration request has (Apple's protocol of that name).
public protocol ASAuthorizationPublicKeyCredentialRegistrationRequest: NSObjectProtocol {
    var relyingPartyIdentifier: String { get }
    var userID: Data { get set }
    var name: String { get set }
    var displayName: String? { get set }
    var challenge: Data { get set }
    var userVerificationPreference: ASAuthorizationPublicKeyCredentialUserVerificationPreference { get set }
    var attestationPreference: ASAuthorizationPublicKeyCredentialAttestationKind { get set }
}

/// What every public-key assertion request has (Apple's protocol of that name).
public protocol ASAuthorizationPublicKeyCredentialAssertionRequest: NSObjectProtocol {
    var challenge: Data { get set }
    var relyingPartyIdentifier: String { get set }
    var userVerificationPreference: ASAuthorizationPublicKeyCredentialUserVerificationPreference { get set }
}

/// A request to register a passkey on this platform.
public final class ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest: ASAuthorizationRequest,
    ASAuthorizationPublicKeyCredentialRegistrationRequest, @unchecked Sendable {
    /// How the request is presented (iOS 18).
    public enum RequestStyle: Int, Sendable, Hashable {
        /// The standard sheet; the default.
        case standard = 0
        /// After a password sign-in, without UI, at the credential manager's discretion.
        case conditional = 1
    }

    public let relyingPartyIdentifier: String
    public var userID: Data
    public var name: String
    /// `user.displayName`; `nil` sends the name.
    public var displayName: String?
    public var challenge: Data
    public var userVerificationPreference: ASAuthorizationPublicKeyCredentialUserVerificationPreference = .preferred
    public var attestationPreference: ASAuthorizationPublicKeyCredentialAttestationKind = .none
    /// Passkeys the account already has: one of them on this device makes the request fail with
    /// ``ASAuthorizationError/Code/matchedExcludedCredential`` (iOS 17.4). Optional, as Apple
    /// declares it (`ASAuthorizationWebBrowserPlatformPublicKeyCredentialRegistrationRequest`'s
    /// `nullable` list): `nil` and an empty list exclude nothing.
    public var excludedCredentials: [ASAuthorizationPlatformPublicKeyCredentialDescriptor]?
    public var requestStyle: RequestStyle = .standard
    /// The largeBlob extension's input (iOS 17): `.supportRequired` or `.supportPreferred`.
    public var largeBlob: ASAuthorizationPublicKeyCredentialLargeBlobRegistrationInput?
    /// The prf extension's input (iOS 18): `.checkForSupport`, or inputs to evaluate.
    public var prf: ASAuthorizationPublicKeyCredentialPRFRegistrationInput?

    init(provider: ASAuthorizationPlatformPublicKeyCredentialProvider, challenge: Data, name: String, userID: Data) {
        self.relyingPartyIdentifier = provider.relyingPartyIdentifier
        self.challenge = challenge
        self.name = name
        self.userID = userID
        super.init(provider: provider)
    }
}

/// A request to sign in with a passkey of this platform.
public final class ASAuthorizationPlatformPublicKeyCredentialAssertionRequest: ASAuthorizationRequest,
    ASAuthorizationPublicKeyCredentialAssertionRequest, @unchecked Sendable {
    public var challenge: Data
    public var relyingPartyIdentifier: String
    public var userVerificationPreference: ASAuthorizationPublicKeyCredentialUserVerificationPreference = .preferred
    /// When non-empty, only these passkeys may sign.
    public var allowedCredentials: [ASAuthorizationPlatformPublicKeyCredentialDescriptor] = []
    /// The largeBlob extension's input (iOS 17): `.read` or `.write(_:)`.
    public var largeBlob: ASAuthorizationPublicKeyCredentialLargeBlobAssertionInput?
    /// The prf extension's input (iOS 18).
    public var prf: ASAuthorizationPublicKeyCredentialPRFAssertionInput?
    /// Whether the sheet may offer a passkey on another device over hybrid (a QR code). Apple
    /// declares it for macOS 13.5 and Mac Catalyst 16.6 only; this device offers no other device,
    /// so it changes nothing (docs/ios.md).
    @available(iOS, unavailable)
    public var shouldShowHybridTransport = true

    init(provider: ASAuthorizationPlatformPublicKeyCredentialProvider, challenge: Data) {
        self.challenge = challenge
        self.relyingPartyIdentifier = provider.relyingPartyIdentifier
        super.init(provider: provider)
    }
}
