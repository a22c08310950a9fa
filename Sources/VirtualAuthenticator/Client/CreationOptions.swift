/// PublicKeyCredentialCreationOptionsJSON (WebAuthn L3 §5.1.10), parsed and checked the way
/// `PublicKeyCredential.parseCreationOptionsFromJSON()` does. Also accepted wrapped as
/// `{"publicKey": {...}}`, the shape several RP libraries send.
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
    public var userVerification: UserVerificationRequirement
    public var attestation: AttestationConveyance
    /// Whether credProps was asked for (also in ``extensions``).
    public var credProps: Bool { extensions.credProps }
    public var extensions: CreationExtensionInputs
    public var timeout: Int?

    public init(json: [UInt8]) throws(AuthenticatorError) {
        var o = try JSONReader(parsing: json, path: "options")
        if o.has("publicKey") { o = try o.reader("publicKey") }
        let rp = try o.reader("rp")
        rpId = try rp.optionalString("id")
        rpName = try rp.optionalString("name") ?? ""
        let user = try o.reader("user")
        userId = try user.bytes("id")
        // §5.4.3: user.id is 1 to 64 bytes.
        guard (1...64).contains(userId.count) else {
            throw AuthenticatorError(.badInput, "options.user.id must be 1 to 64 bytes, got \(userId.count)")
        }
        userName = try user.optionalString("name") ?? ""
        userDisplayName = try user.optionalString("displayName") ?? ""
        challenge = try o.bytes("challenge")
        guard !challenge.isEmpty else { throw AuthenticatorError(.badInput, "options.challenge is empty") }
        var algorithms = [Int]()
        for p in try o.readers("pubKeyCredParams") where try p.string("type") == "public-key" {
            guard let alg = try p.int("alg") else { throw AuthenticatorError(.badInput, "\(p.path).alg is missing") }
            algorithms.append(alg)
        }
        // §5.1.3 step 10: an empty list means ES256 and RS256.
        self.algorithms = o.has("pubKeyCredParams") && !(o.object["pubKeyCredParams"] as? [Any] ?? []).isEmpty
            ? algorithms : [COSEAlgorithm.es256.rawValue, COSEAlgorithm.rs256.rawValue]
        excludeCredentials = try o.descriptorIds("excludeCredentials")
        let selection = try o.optionalReader("authenticatorSelection")
        authenticatorAttachment = try selection?.optionalString("authenticatorAttachment")
        userVerification = try selection?.userVerification() ?? .preferred
        // Unknown conveyance values are ignored (§5.4.7): they mean "none".
        attestation = AttestationConveyance(rawValue: try o.optionalString("attestation") ?? "none") ?? .none
        extensions = try CreationExtensionInputs(try o.optionalReader("extensions"))
        timeout = try o.timeout()
    }
}
