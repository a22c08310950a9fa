/// The members every PublicKeyCredential's JSON has (WebAuthn L3 §5.1, `toJSON()`), around the
/// ceremony's own `response`.
struct PublicKeyCredentialJSON<Response: Encodable>: Encodable {
    let id: String
    let rawId: String
    let type = "public-key"
    let authenticatorAttachment: String
    let response: Response
    let clientExtensionResults: ClientExtensionResults

    init(credentialId: [UInt8], attachment: AuthenticatorAttachment, response: Response,
         clientExtensionResults: ClientExtensionResults) {
        id = Base64URL.encode(credentialId)
        rawId = id
        authenticatorAttachment = attachment.rawValue
        self.response = response
        self.clientExtensionResults = clientExtensionResults
    }
}
