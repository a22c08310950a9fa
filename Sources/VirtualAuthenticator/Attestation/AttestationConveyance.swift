/// What the RP asked for (`AttestationConveyancePreference`, WebAuthn L3 §5.4.7). Unknown values
/// mean `none`; `indirect` and `enterprise` are answered as `direct` (no anonymization CA, and an
/// enterprise attestation is what the `managed-device` profile sends anyway).
public enum AttestationConveyance: String, Sendable {
    case none, indirect, direct, enterprise
}
