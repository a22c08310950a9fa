/// AuthenticationExtensionsClientOutputsJSON: only the extensions the client ran appear.
public struct ClientExtensionResults: Encodable, Sendable, Equatable {
    /// credProps (WebAuthn L3 §10.1.3).
    public struct CredentialProperties: Encodable, Sendable, Equatable {
        public let rk: Bool
    }

    public var credProps: CredentialProperties?

    public init(credProps: CredentialProperties? = nil) { self.credProps = credProps }
}
