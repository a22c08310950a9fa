import KeyVault
import VirtualAuthenticator

/// The simulated biometric sensor. A PIN is right when it unwraps the biometry key; every wrong PIN
/// is counted in the sealed vault before it is tried, so a restart does not forget it, and the
/// count is read and written under the vault's exclusive lock, so parallel processes cannot race
/// past it. At `maxAttempts` consecutive failures biometry locks out until ``unlock()``.
final class BiometricSensor {
    /// Proof that the user passed the biometric check in this ceremony: the biometry key the PIN
    /// unwrapped. Only the sensor makes one (its initializer is private to this file); the store
    /// needs it to seal or open a passkey made with user verification, so no code path reaches
    /// such a key without the PIN.
    struct Unlock {
        let biometryKey: SecureBytes

        fileprivate init(biometryKey: SecureBytes) { self.biometryKey = biometryKey }
    }

    private let vault: Vault
    private var settings: DeviceSettings

    init(vault: Vault) throws(VaultError) {
        self.vault = vault
        self.settings = try DeviceSettings(in: vault)
    }

    var enrolled: Bool { settings.enrollment != nil }

    var status: BiometryStatus {
        BiometryStatus(enrolled: enrolled, failures: settings.failures, maxAttempts: settings.maxAttempts,
                       lockedOut: settings.lockedOut)
    }

    /// Checks the PIN `readPIN` gives (read only once the sensor is known to be usable) and returns
    /// the unlocked biometry key.
    func verify(_ prompt: UserPrompt, readPIN: () throws(AuthenticatorError) -> SecureBytes) throws(AuthenticatorError) -> BiometricSensor.Unlock {
        guard let enrollment = settings.enrollment else {
            throw AuthenticatorError(.notHandled, "no biometric PIN is enrolled in this vault")
        }
        guard !settings.lockedOut else {
            throw AuthenticatorError(.biometryLockout,
                "biometry is locked out after \(settings.failures) failed attempts; unlock it with the vault passphrase ('authctl biometry unlock')")
        }
        let pin = try readPIN()
        // Counted before the PIN is tried, as CTAP counts pinRetries: a process that dies, or a
        // write that fails, after a wrong guess cannot leave the guess uncounted.
        try record(failures: settings.failures + 1)
        let key: SecureBytes?
        do { key = try vault.unlockBiometry(pin: pin, enrollment) } catch { throw AuthenticatorError(error) }
        guard let key else {
            let left = settings.maxAttempts - min(settings.failures, settings.maxAttempts)
            throw AuthenticatorError(.failed, "the biometric PIN did not match; " + (left == 0
                ? "biometry is now locked out until 'authctl biometry unlock'"
                : "\(left) attempt\(left == 1 ? "" : "s") left before lockout"))
        }
        try record(failures: 0)
        return Unlock(biometryKey: key)
    }

    private func record(failures: UInt32) throws(AuthenticatorError) {
        settings.failures = failures
        do { try settings.commit(to: vault) } catch { throw AuthenticatorError(error) }
    }

    /// Clears the failure count (the vault passphrase is the proof, as the device passcode is on a
    /// phone).
    func unlock() throws(VaultError) {
        settings.failures = 0
        try settings.commit(to: vault)
    }

    /// Wraps the biometry key `keeping` unlocked (or a new one) under `pin`, clears the count, and
    /// commits `others` (passkeys dropped with the old key) in the same frame.
    func enroll(pin: SecureBytes, keeping: BiometricSensor.Unlock?, committing others: [VaultRecord] = []) throws(VaultError) {
        let (enrollment, _) = try vault.enrollBiometry(pin: pin, keeping: keeping?.biometryKey)
        settings.enrollment = enrollment
        settings.failures = 0
        try settings.commit(to: vault, with: others)
    }
}
