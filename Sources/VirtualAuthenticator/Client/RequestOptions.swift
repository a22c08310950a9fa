/// PublicKeyCredentialRequestOptionsJSON (WebAuthn L3 §5.5.x), converted and decoded the way
/// `PublicKeyCredential.parseRequestOptionsFromJSON()` does (§5.1.9; docs/conformance.md). Also
/// accepted wrapped as `{"publicKey": {...}}`.
public struct RequestOptions: Sendable {
    public var rpId: String?
    public var challenge: [UInt8]
    public var allowCredentials: [[UInt8]]
    public var userVerification: UserVerificationRequirement
    /// The effective timeout in milliseconds (10 s … 10 min), `nil` when the options give none.
    public var timeout: Int?
    /// `hints` (read and type-checked; authctl, a platform authenticator, acts on none).
    public var hints: [String]
    public var extensions: RequestExtensionInputs

    public init(json: [UInt8]) throws(AuthenticatorError) {
        var o = try JSONReader(parsing: json, path: "options")
        if o.object["publicKey"] is [String: Any] { o = try o.reader("publicKey") }
        // Members in WebIDL order (lexicographic).
        allowCredentials = try o.descriptorIds("allowCredentials")
        challenge = try o.bytes("challenge")
        extensions = try RequestExtensionInputs(try o.optionalReader("extensions"))
        hints = try o.strings("hints")
        rpId = o.optionalString("rpId")
        timeout = o.timeout()
        userVerification = o.userVerification()
        try o.finish()
        // authctl's own refusal (WebAuthn sets no minimum): an empty challenge proves no freshness.
        guard !challenge.isEmpty else { throw AuthenticatorError(.badInput, "options.challenge is empty") }
    }
}
