/// RegistrationResponseJSON (WebAuthn L3 §5.1.11): what `create()` resolves to, as a page POSTs it.
public struct RegistrationResponse: Sendable, Encodable {
    public let clientDataJSON: [UInt8]
    public let result: MakeCredentialResponse
    public let clientExtensionResults: ClientExtensionResults
    public let authenticatorAttachment: AuthenticatorAttachment
    /// `getTransports()`: how the client can reach this authenticator again (the profile's).
    public let transports: [String]
    /// What the client accepted from the options but the RP should fix (``CreationOptions/warnings``);
    /// not part of the JSON. The command line prints them on stderr.
    public var warnings: [String] = []

    /// AuthenticatorAttestationResponseJSON (§5.2.1.1).
    struct AttestationResponseJSON: Encodable {
        let clientDataJSON: String
        let attestationObject: String
        let authenticatorData: String
        let publicKey: String
        let publicKeyAlgorithm: Int
        let transports: [String]
    }

    public func encode(to encoder: any Encoder) throws {
        try PublicKeyCredentialJSON(credentialId: result.credential.id, attachment: authenticatorAttachment, response: AttestationResponseJSON(
            clientDataJSON: Base64URL.encode(clientDataJSON),
            attestationObject: Base64URL.encode(result.attestationObject.bytes),
            authenticatorData: Base64URL.encode(result.authenticatorData),
            publicKey: Base64URL.encode(result.publicKeySPKI),
            publicKeyAlgorithm: result.credential.publicKey.algorithm.rawValue,
            transports: transports), clientExtensionResults: clientExtensionResults).encode(to: encoder)
    }

    /// The JSON text, one line, as the CLI prints it: what ``JSONOutput`` writes, built directly.
    public var json: String {
        typealias J = PublicKeyCredentialJSON<AttestationResponseJSON>
        return J.fastJSON(credentialId: result.credential.id, attachment: authenticatorAttachment, response: [
            ("attestationObject", .base64URL(result.attestationObject.bytes)),
            ("authenticatorData", .base64URL(result.authenticatorData)),
            ("clientDataJSON", .base64URL(clientDataJSON)),
            ("publicKey", .base64URL(result.publicKeySPKI)),
            ("publicKeyAlgorithm", .integer(result.credential.publicKey.algorithm.rawValue)),
            ("transports", .plainStrings(transports)),
        ], clientExtensionResults: clientExtensionResults)
    }
}
