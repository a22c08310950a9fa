/// The attestation statement formats this authenticator can produce (WebAuthn L3 §8).
public enum AttestationFormat: String, Sendable, CaseIterable {
    case none
    /// Self attestation for the `authctl` profile; with a certificate chain (`x5c`) for others.
    case packed
    case tpm
    case androidKey = "android-key"
    case fidoU2F = "fido-u2f"
    case apple

    /// Whether the statement carries a signature (`sig`) a fault can break.
    package var hasSignature: Bool { self != .none && self != .apple }
}
