/// How a credential's signature counter moves (WebAuthn L3 §6.1.1): never (synced passkeys
/// report 0), per credential (1, 2, 3, … for each passkey), or one counter the whole
/// authenticator shares, as many security keys keep — each assertion of any of its passkeys takes
/// the next value.
public enum SignCounter: String, Sendable, CaseIterable {
    case zero
    case perCredential = "per-credential"
    case global
}
