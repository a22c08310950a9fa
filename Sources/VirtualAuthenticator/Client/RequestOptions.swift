/// PublicKeyCredentialRequestOptionsJSON (WebAuthn L3 §5.5.x), likewise.
public struct RequestOptions: Sendable {
    public var rpId: String?
    public var challenge: [UInt8]
    public var allowCredentials: [[UInt8]]
    public var userVerification: UserVerificationRequirement
    public var timeout: Int?
    public var extensions: RequestExtensionInputs

    public init(json: [UInt8]) throws(AuthenticatorError) {
        var o = try JSONReader(parsing: json, path: "options")
        if o.has("publicKey") { o = try o.reader("publicKey") }
        rpId = try o.optionalString("rpId")
        challenge = try o.bytes("challenge")
        guard !challenge.isEmpty else { throw AuthenticatorError(.badInput, "options.challenge is empty") }
        allowCredentials = try o.descriptorIds("allowCredentials")
        userVerification = try o.userVerification()
        timeout = try o.timeout()
        extensions = try RequestExtensionInputs(try o.optionalReader("extensions"))
    }
}
