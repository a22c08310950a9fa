/// AuthenticationResponseJSON (WebAuthn L3 §5.1.12): what `get()` resolves to, as a page POSTs it.
public struct AuthenticationResponse: Sendable, Encodable {
    public let clientDataJSON: [UInt8]
    public let result: GetAssertionResponse
    public let authenticatorAttachment: AuthenticatorAttachment
    public var clientExtensionResults = ClientExtensionResults()
    /// What the client accepted from the options but the RP should fix (``RequestOptions/warnings``);
    /// not part of the JSON. The command line prints them on stderr.
    public var warnings: [String] = []

    /// AuthenticatorAssertionResponseJSON (§5.2.2.1).
    struct AssertionResponseJSON: Encodable {
        let clientDataJSON: String
        let authenticatorData: String
        let signature: String
        /// Absent for an empty user handle, as Chromium 156 leaves it out (the user's id was empty).
        let userHandle: String?
    }

    public func encode(to encoder: any Encoder) throws {
        try PublicKeyCredentialJSON(credentialId: result.credential.id, attachment: authenticatorAttachment, response: AssertionResponseJSON(
            clientDataJSON: Base64URL.encode(clientDataJSON),
            authenticatorData: Base64URL.encode(result.authenticatorData),
            signature: Base64URL.encode(result.signature),
            userHandle: result.credential.userHandle.isEmpty ? nil : Base64URL.encode(result.credential.userHandle)),
            clientExtensionResults: clientExtensionResults).encode(to: encoder)
    }

    /// The JSON text, one line, as the CLI prints it: what ``JSONOutput`` writes, built directly
    /// (a sign-in's hot path).
    public var json: String {
        typealias J = PublicKeyCredentialJSON<AssertionResponseJSON>
        var members: [(name: StaticString, value: J.FastValue)] = [
            ("authenticatorData", .base64URL(result.authenticatorData)),
            ("clientDataJSON", .base64URL(clientDataJSON)),
            ("signature", .base64URL(result.signature)),
        ]
        if !result.credential.userHandle.isEmpty { members.append(("userHandle", .base64URL(result.credential.userHandle))) }
        return J.fastJSON(credentialId: result.credential.id, attachment: authenticatorAttachment, response: members,
                          clientExtensionResults: clientExtensionResults)
    }
}
