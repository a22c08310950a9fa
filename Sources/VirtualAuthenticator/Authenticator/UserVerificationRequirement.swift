/// How a request wants user verification (WebAuthn L3 §5.8.6), resolved by the client.
public enum UserVerificationRequirement: String, Sendable {
    case required, preferred, discouraged
}
