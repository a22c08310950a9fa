/// Where a WebAuthn call comes from, beyond the options: the page's origin and — for a call from a
/// cross-origin iframe — the top-level origin, what the embedding page allows, whether the user
/// just clicked, the mediation asked for, where related origins come from, and (for conditional
/// create) whether the password manager saw a recent password sign-in.
public struct CallerContext: Sendable {
    /// The origin of the document that calls (the iframe's, for an embedded call).
    public var origin: String
    /// The top-level page's origin when it differs from `origin` (an iframe); `nil` or equal:
    /// same-origin with its ancestors.
    public var topOrigin: String?
    /// The iframe's `allow="publickey-credentials-create|get"` (Permissions Policy): without it a
    /// cross-origin call is NotAllowedError.
    public var framePermission: Bool
    /// Transient user activation (a click just now): a cross-origin create needs it.
    public var userActivation: Bool
    public var mediation: Mediation
    /// CredentialRequestOptions' `uiMode` (sign-in only; a create ignores it).
    public var uiMode: UIMode?
    /// Where the RP's `/.well-known/webauthn` comes from, consulted when the RP ID is not a
    /// registrable suffix of the origin (WebAuthn L3 §5.11); `nil`: never consulted.
    public var relatedOrigins: RelatedOrigins.Source?
    /// The password manager signed this user in with a password recently: a conditional create
    /// is allowed (the automatic passkey upgrade after a password sign-in).
    public var recentPasswordSignIn: Bool
    /// Refuse what Chromium accepts but an RP should not send (an empty challenge or `user.id`,
    /// base64url with non-zero trailing bits) instead of accepting it with a warning.
    public var strict: Bool
    /// The caller is a native app through its platform's passkey API (AuthenticationServices),
    /// not a page: its clientDataJSON has no crossOrigin member, as iOS writes it.
    public var nativeApp: Bool

    public init(origin: String, topOrigin: String? = nil, framePermission: Bool = true, userActivation: Bool = true,
                mediation: Mediation = .optional, uiMode: UIMode? = nil, relatedOrigins: RelatedOrigins.Source? = nil,
                recentPasswordSignIn: Bool = false, strict: Bool = false, nativeApp: Bool = false) {
        self.nativeApp = nativeApp
        self.uiMode = uiMode
        self.strict = strict
        self.origin = origin
        self.topOrigin = topOrigin
        self.framePermission = framePermission
        self.userActivation = userActivation
        self.mediation = mediation
        self.relatedOrigins = relatedOrigins
        self.recentPasswordSignIn = recentPasswordSignIn
    }

    /// The caller's origin, its top-level origin when it is a different one (a cross-origin
    /// call), and the checks §5.1.3 step 2 / §5.1.4 step 2 make of such a call.
    func resolve(_ ceremony: UserPrompt.Ceremony) throws(AuthenticatorError) -> (origin: Origin, top: Origin?) {
        let origin = try Origin.parsed(self.origin)
        guard let topOrigin else { return (origin, nil) }
        let top = try Origin(parsingTopLevel: topOrigin)
        guard top != origin else { return (origin, nil) }
        let feature = ceremony == .registration ? "publickey-credentials-create" : "publickey-credentials-get"
        guard framePermission else {
            throw AuthenticatorError(.notHandled, "the call comes from an iframe (\(origin.serialized) in \(top.serialized)) that is not allowed \(feature)")
        }
        guard mediation != .conditional else {
            throw AuthenticatorError(.notHandled, "conditional mediation is not available in a cross-origin iframe")
        }
        if ceremony == .registration && !userActivation {
            throw AuthenticatorError(.notHandled, "a cross-origin create needs a user activation (a click) in the iframe")
        }
        return (origin, top)
    }
}
