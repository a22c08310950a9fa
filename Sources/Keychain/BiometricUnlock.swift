import KeyVault

/// Proof that the user passed the biometric check in this ceremony: the biometry key the PIN
/// unwrapped. The sensor is the only one that makes it; the store needs it to seal or open a
/// passkey made with user verification, so no code path reaches such a key without the PIN.
struct BiometricUnlock {
    let biometryKey: SecureBytes
}
