/// PublicKeyCredentialRequestOptionsJSON (WebAuthn L3 §5.5.x), converted and decoded the way
/// `PublicKeyCredential.parseRequestOptionsFromJSON()` does (§5.1.9; docs/conformance.md). Also
/// accepted wrapped as `{"publicKey": {...}}`.
public struct RequestOptions: Sendable {
    public var rpId: String?
    public var challenge: [UInt8]
    public var allowCredentials: [[UInt8]]
    /// Each `allowCredentials` entry's `transports`, as given (same order).
    public var allowTransports: [[String]]
    public var userVerification: UserVerificationRequirement
    /// The effective timeout in milliseconds (10 s … 10 min), `nil` when the options give none.
    public var timeout: Int?
    /// `hints` (read and type-checked; authctl, a platform authenticator, acts on none).
    public var hints: [String]
    package var extensions: RequestExtensionInputs
    /// What the RP should not have sent but the browser accepts (see ``CreationOptions/warnings``).
    public var warnings: [String]

    /// - Parameter strict: refuse what ``warnings`` would accept (``CallerContext/strict``).
    public init(json: [UInt8], strict: Bool = false) throws(AuthenticatorError) {
        var o = try JSONReader(parsing: json, path: "options", strict: strict)
        if o.object["publicKey"] is [String: Any] { o = try o.reader("publicKey") }
        // Members in WebIDL order (lexicographic).
        let allowed = try o.descriptors("allowCredentials")
        allowCredentials = allowed.map(\.id)
        allowTransports = allowed.map(\.transports)
        challenge = try o.bytes("challenge")
        extensions = try RequestExtensionInputs(try o.optionalReader("extensions"))
        hints = try o.strings("hints")
        rpId = o.optionalString("rpId")
        timeout = o.timeout()
        userVerification = o.userVerification()
        try o.finish()
        // WebAuthn sets no minimum for the challenge; an empty one proves no freshness.
        try o.acceptChallenge(challenge)
        warnings = o.warnings
    }
}
