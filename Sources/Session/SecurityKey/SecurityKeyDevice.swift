import Keychain

extension AccountSpec.DeviceSpec {
    /// A device that answers as a security key: of profile `security-key`, with a key's
    /// ``KeyPIN/maxRetries`` PIN attempts (pinRetries 8), and no PIN until a client sets one over
    /// CTAP (or `pin` is given: the biometric PIN, see ``KeyPIN``).
    public static func securityKey(name: String = "key", pin: SecureBytes? = nil) -> AccountSpec.DeviceSpec {
        AccountSpec.DeviceSpec(name: name, pin: pin, maxPINAttempts: KeyPIN.maxRetries, profile: "security-key")
    }
}
