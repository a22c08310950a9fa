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

extension PublicKeyCredentialJSON {
    /// The same JSON ``JSONOutput`` writes for a credential, built directly: members in sorted
    /// order, no escaping needed. Every value here is base64url, a COSE number or one of the
    /// fixed names (attachment, transports), so none has a character JSON escapes; the extension
    /// results, which can hold anything, still go through the encoder unless empty. A unit test
    /// holds the two to the same bytes.
    static func fastJSON(credentialId: [UInt8], attachment: AuthenticatorAttachment, response members: [(String, String)],
                         clientExtensionResults: ClientExtensionResults) -> String {
        let id = Base64URL.encode(credentialId)
        let extensions = clientExtensionResults == ClientExtensionResults() ? "{}" : JSONOutput.string(clientExtensionResults)
        var out = "{\"authenticatorAttachment\":\"" + attachment.rawValue + "\",\"clientExtensionResults\":" + extensions
        out += ",\"id\":\"" + id + "\",\"rawId\":\"" + id + "\",\"response\":{"
        out += members.map { "\"" + $0.0 + "\":" + $0.1 }.joined(separator: ",")
        return out + "},\"type\":\"public-key\"}"
    }

    /// A JSON string of text that needs no escaping (base64url, fixed names).
    static func plain(_ text: String) -> String { "\"" + text + "\"" }
}
