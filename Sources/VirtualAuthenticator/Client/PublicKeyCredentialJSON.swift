/// The members every PublicKeyCredential's JSON has (WebAuthn L3 §5.1, `toJSON()`), around the
/// ceremony's own `response`.
struct PublicKeyCredentialJSON<Response: Encodable>: Encodable {
    let id: String
    let rawId: String
    let type = "public-key"
    let authenticatorAttachment = "platform"
    let response: Response
    let clientExtensionResults: ClientExtensionResults

    init(credentialId: [UInt8], response: Response, clientExtensionResults: ClientExtensionResults) {
        id = Base64URL.encode(credentialId)
        rawId = id
        self.response = response
        self.clientExtensionResults = clientExtensionResults
    }
}

/// AuthenticationExtensionsClientOutputsJSON: only the extensions the client ran appear.
public struct ClientExtensionResults: Encodable, Sendable, Equatable {
    /// credProps (WebAuthn L3 §10.1.3).
    public struct CredentialProperties: Encodable, Sendable, Equatable {
        public let rk: Bool
    }

    public var credProps: CredentialProperties?

    public init(credProps: CredentialProperties? = nil) { self.credProps = credProps }
}
