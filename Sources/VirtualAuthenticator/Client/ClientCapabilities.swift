/// What `PublicKeyCredential.getClientCapabilities()` (WebAuthn L3 §5.1.7) gives a page, and the
/// two older questions, `isUserVerifyingPlatformAuthenticatorAvailable()` (§5.1.8) and
/// `isConditionalMediationAvailable()` (§5.1.6): computed from what this client implements and
/// the authenticator behind it.
public struct ClientCapabilities: Sendable, Equatable {
    /// The extensions the client processes (`extension:<identifier>` keys, §5.1.7).
    public static let extensions = ["credBlob", "credProps", "credProtect", "largeBlob", "minPinLength", "prf"]

    /// Every key with its value, in the order a page reads them (the L3 keys alphabetically, then
    /// the extensions').
    public let values: [(key: String, value: Bool)]
    public let userVerifyingPlatformAuthenticatorAvailable: Bool
    public let conditionalMediationAvailable: Bool

    /// - Parameters:
    ///   - supported: the client has passkey support at all (`false`: a browser without WebAuthn,
    ///     where every answer is `false`);
    ///   - platform: the authenticator is a platform one (not a security key);
    ///   - userVerifying: it can verify the user (a biometric is enrolled);
    ///   - hybrid: another device can answer over hybrid (a phone for the QR code).
    package init(supported: Bool, platform: Bool, userVerifying: Bool, hybrid: Bool) {
        let uvpaa = supported && platform && userVerifying
        let hybridTransport = supported && hybrid
        // Conditional (autofill) sign-in offers the platform's passkeys; a security key has no list.
        let conditionalGet = supported && platform
        var values: [(String, Bool)] = [
            // Ambient sign-in (`--mediation conditional --ui-mode passive`): the platform's passkeys
            // offered outside the page's fields. (Chromium 156 does not list this key yet.)
            ("ambientGet", conditionalGet),
            // The automatic upgrade after a password sign-in (`--mediation conditional` on create).
            ("conditionalCreate", supported && platform),
            ("conditionalGet", conditionalGet),
            ("hybridTransport", hybridTransport),
            // Immediate sign-in (`--ui-mode immediate`): a local passkey or NotAllowedError at once.
            ("immediateGet", supported && platform),
            // Chrome's reading of "locally and/or via hybridTransport".
            ("passkeyPlatformAuthenticator", uvpaa || hybridTransport),
            ("relatedOrigins", supported),  // §5.11, `--related-origins`
            ("signalAllAcceptedCredentials", supported),
            ("signalCurrentUserDetails", supported),
            ("signalUnknownCredential", supported),
            ("userVerifyingPlatformAuthenticator", uvpaa),
        ]
        values += Self.extensions.map { ("extension:" + $0, supported) }
        self.values = values
        userVerifyingPlatformAuthenticatorAvailable = uvpaa
        conditionalMediationAvailable = conditionalGet
    }

    public subscript(key: String) -> Bool? { values.first { $0.key == key }?.value }

    public static func == (a: ClientCapabilities, b: ClientCapabilities) -> Bool {
        a.values.map(\.key) == b.values.map(\.key) && a.values.map(\.value) == b.values.map(\.value)
            && a.userVerifyingPlatformAuthenticatorAvailable == b.userVerifyingPlatformAuthenticatorAvailable
            && a.conditionalMediationAvailable == b.conditionalMediationAvailable
    }
}
