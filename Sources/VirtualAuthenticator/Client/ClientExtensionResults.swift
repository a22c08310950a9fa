/// AuthenticationExtensionsClientOutputsJSON: only the extensions the client ran appear. Binary
/// values are written as base64url strings (the JSON form `toJSON()` gives).
public struct ClientExtensionResults: Encodable, Sendable, Equatable {
    /// credProps (WebAuthn L3 §10.1.3).
    public struct CredentialProperties: Encodable, Sendable, Equatable {
        public let rk: Bool
    }

    /// AuthenticationExtensionsPRFValuesJSON.
    public struct PRFResults: Encodable, Sendable, Equatable {
        public let first: String
        public let second: String?

        init(_ values: PRFValues) {
            first = Base64URL.encode(values.first)
            second = values.second.map { Base64URL.encode($0) }
        }
    }

    /// prf (WebAuthn L3 §10.1.4): `enabled` at registration, `results` when inputs were evaluated.
    public struct PRF: Encodable, Sendable, Equatable {
        public var enabled: Bool?
        public var results: PRFResults?
    }

    /// largeBlob (WebAuthn L3 §10.1.5).
    public struct LargeBlob: Encodable, Sendable, Equatable {
        public var supported: Bool?
        public var blob: String?
        public var written: Bool?
    }

    /// appid (WebAuthn L3 §10.1.1): whether the AppID was used instead of the RP ID.
    public var appid: Bool?
    public var credProps: CredentialProperties?
    public var prf: PRF?
    public var largeBlob: LargeBlob?
    /// credBlob (CTAP 2.1 §12.2), as Chrome reports it: whether the blob was stored, and
    /// `getCredBlob` the blob a sign-in read (base64url).
    public var credBlob: Bool?
    public var getCredBlob: String?

    public init(credProps: CredentialProperties? = nil) { self.credProps = credProps }
}
