/// The attestation statement formats this authenticator can produce (WebAuthn L3 §8).
public enum AttestationFormat: String, Sendable {
    case none
    case packed
}
