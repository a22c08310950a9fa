/// Whether the authenticator should verify the user (WebAuthn's UserVerificationRequirement):
/// Apple's `NS_TYPED_EXTENSIBLE_ENUM` of strings, whose values are the WebAuthn words.
public struct ASAuthorizationPublicKeyCredentialUserVerificationPreference: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public static let preferred = Self(rawValue: "preferred")
    public static let required = Self(rawValue: "required")
    public static let discouraged = Self(rawValue: "discouraged")
}

/// The attestation the relying party asks for (WebAuthn's AttestationConveyancePreference).
public struct ASAuthorizationPublicKeyCredentialAttestationKind: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public static let none = Self(rawValue: "none")
    public static let direct = Self(rawValue: "direct")
    public static let indirect = Self(rawValue: "indirect")
    public static let enterprise = Self(rawValue: "enterprise")
}

/// Where the authenticator that answered is: this device (`platform`), or another one reached
/// over hybrid or a security key (`crossPlatform`).
public enum ASAuthorizationPublicKeyCredentialAttachment: Int, Sendable, Hashable {
    case platform = 0
    case crossPlatform = 1
}
