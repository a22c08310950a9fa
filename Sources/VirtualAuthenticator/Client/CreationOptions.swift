/// PublicKeyCredentialCreationOptionsJSON (WebAuthn L3 §5.1.10), converted and decoded the way
/// `PublicKeyCredential.parseCreationOptionsFromJSON()` does (§5.1.8; member by member in
/// docs/conformance.md). Also accepted wrapped as `{"publicKey": {...}}`, the shape several RP
/// libraries send.
public struct CreationOptions: Sendable {
    public var rpId: String?
    public var rpName: String
    public var userId: [UInt8]
    public var userName: String
    public var userDisplayName: String
    public var challenge: [UInt8]
    /// COSE algorithms of the `public-key` entries, in order; unknown types are skipped (§5.1.3 step 10).
    public var algorithms: [Int]
    public var excludeCredentials: [[UInt8]]
    public var authenticatorAttachment: String?
    public var residentKey: String?
    public var requireResidentKey: Bool
    public var userVerification: UserVerificationRequirement
    public var attestation: AttestationConveyance
    /// `attestationFormats` and `hints` (read and type-checked; authctl answers with its
    /// profile's format and acts on no hint).
    public var attestationFormats: [String]
    public var hints: [String]
    /// Whether credProps was asked for (also in ``extensions``).
    public var credProps: Bool { extensions.credProps }
    package var extensions: CreationExtensionInputs
    /// The effective timeout in milliseconds (10 s … 10 min), `nil` when the options give none.
    public var timeout: Int?
    /// What the RP should not have sent but the browser accepts (an empty challenge or user.id,
    /// base64url with non-zero trailing bits): one sentence each, for stderr.
    public var warnings: [String]

    /// - Parameter strict: refuse those instead (``CallerContext/strict``).
    public init(json: [UInt8], strict: Bool = false) throws(AuthenticatorError) {
        var o = try JSONReader(parsing: json, path: "options", strict: strict)
        if o.object["publicKey"] is [String: Any] { o = try o.reader("publicKey") }
        // Members in WebIDL order (lexicographic), nested dictionaries likewise.
        attestation = o.optionalString("attestation").flatMap(AttestationConveyance.init(rawValue:)) ?? .none  // §5.4.7: unknown is "none"
        attestationFormats = try o.strings("attestationFormats")
        let selection = try o.optionalReader("authenticatorSelection")
        authenticatorAttachment = selection?.optionalString("authenticatorAttachment")
        requireResidentKey = selection?.bool("requireResidentKey") ?? false
        residentKey = selection?.optionalString("residentKey")
        userVerification = selection?.userVerification() ?? .preferred
        challenge = try o.bytes("challenge")
        excludeCredentials = try o.descriptorIds("excludeCredentials")
        extensions = try CreationExtensionInputs(try o.optionalReader("extensions"))
        hints = try o.strings("hints")
        warnings = []
        // pubKeyCredParams: `type` and `alg` are both required, whatever the type (§5.3).
        guard o.has("pubKeyCredParams") else { throw WebIDL.missing("options.pubKeyCredParams") }
        let parameters = try o.readers("pubKeyCredParams")
        var algorithms = [Int]()
        for p in parameters {
            let alg = Int(try p.long("alg"))
            if try p.string("type") == "public-key" { algorithms.append(alg) }
        }
        let rp = try o.reader("rp")
        rpId = rp.optionalString("id")
        rpName = try rp.string("name")
        timeout = o.timeout()
        let user = try o.reader("user")
        userDisplayName = try user.string("displayName")
        userId = try user.bytes("id")
        userName = try user.string("name")
        try o.finish()
        // §5.1.3 step 10: an empty list means ES256 and RS256.
        self.algorithms = parameters.isEmpty ? [COSEAlgorithm.es256.rawValue, COSEAlgorithm.rs256.rawValue] : algorithms
        // §5.1.3 step 5: user.id is at most 64 bytes (a TypeError). The spec's minimum of 1 is not
        // enforced by Chromium 156: an empty user.id is accepted, with a warning (refused with strict).
        guard userId.count <= 64 else {
            throw AuthenticatorError(.badInput, "options.user.id must be 1 to 64 bytes, got \(userId.count) (TypeError)")
        }
        if userId.isEmpty {
            try o.accept("options.user.id is empty: every account of the RP gets the same user handle, so each new passkey replaces the last one, and a sign-in cannot say whose it is",
                         unlessStrict: AuthenticatorError(.badInput, "options.user.id must be 1 to 64 bytes, got 0 (TypeError; refused with --strict)"))
        }
        // WebAuthn sets no minimum for the challenge; an empty one proves no freshness.
        try o.acceptChallenge(challenge)
        warnings = o.warnings
    }
}
