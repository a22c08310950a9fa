/// How the authenticator is attached to the client (WebAuthn L3 §5.4.5): built into the device, or
/// reached across a transport — as a phone signs for a laptop over hybrid (QR and Bluetooth).
public enum AuthenticatorAttachment: String, Sendable {
    case platform
    case crossPlatform = "cross-platform"
}
