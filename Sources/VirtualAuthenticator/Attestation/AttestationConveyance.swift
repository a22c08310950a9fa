/// What the RP asked for (`AttestationConveyancePreference`, WebAuthn L3 §5.4.7).
public enum AttestationConveyance: String, Sendable {
    case none, indirect, direct, enterprise

    /// The format this authenticator answers a preference with: self attestation in `packed`
    /// whenever the RP asks for any attestation at all.
    public var format: AttestationFormat { self == .none ? .none : .packed }
}
