import KeyVault
import VirtualAuthenticator

/// One device's simulated biometric sensor. A PIN is right when it unwraps the account's biometry
/// key from this device's enrollment; every wrong PIN is counted in the sealed vault before it is
/// tried, so a restart does not forget it, and the count is read and written under the vault's
/// writer lock, so parallel processes cannot race past it. At `maxAttempts` consecutive failures
/// this device's biometry locks out until ``unlock()``; other devices keep their own count.
///
/// An account that lives across ceremonies (a server's, a scenario's, a library caller's) keeps
/// what the first right PIN on a device established (``Memory``), so a later check of the same
/// enrollment costs a keyed hash and a constant-time compare rather than an Argon2id
/// (docs/biometry.md, "What a process keeps").
final class BiometricSensor {
    /// Proof that the user passed the biometric check in this ceremony: the biometry key the PIN
    /// unwrapped. Only the sensor makes one (its initializer is private to this file); the store
    /// needs it to seal or open a passkey made with user verification, so no code path reaches
    /// such a key without the PIN.
    struct Unlock {
        let biometryKey: SecureBytes
        /// Which biometry key this is, in this process (``ProcessVerifier/tag(of:)``): a private key
        /// opened under it is kept under its revision id and this tag, so only a later ceremony
        /// whose check gave the same key finds it.
        let keyTag: [UInt8]

        fileprivate init(biometryKey: SecureBytes) {
            self.biometryKey = biometryKey
            keyTag = ProcessVerifier.tag(of: biometryKey)
        }
    }

    /// What a right PIN on one device established, kept by its ``Account`` in memory only, for as
    /// long as the account is open: the enrollment it was checked against, a verifier of the PIN
    /// (never the PIN) and the biometry key it unwrapped, both in guarded memory. Used only while
    /// the device's enrollment is still that one.
    struct Memory {
        let enrollment: BiometryEnrollment
        let verifier: SecureBytes
        let unlock: Unlock
    }

    private let account: Account
    private let deviceId: [UInt8]

    init(account: Account, deviceId: [UInt8]) {
        self.account = account
        self.deviceId = deviceId
    }

    /// The device's record as the vault holds it now.
    private func record() throws(AuthenticatorError) -> DeviceRecord {
        do { return try account.deviceRecord(id: deviceId) } catch {
            // The device's own error, met inside a ceremony: the program's failure (`unknown`).
            throw AuthenticatorError(.unknown, error.message)
        }
    }

    var enrolled: Bool { (try? record().enrollment) != nil }

    var status: BiometryStatus {
        let r = try? record()
        return BiometryStatus(enrolled: r?.enrollment != nil, failures: r?.failures ?? 0,
                              maxAttempts: r?.maxAttempts ?? DeviceRecord.defaultMaxAttempts, lockedOut: r?.lockedOut ?? false)
    }

    /// Checks the PIN `readPIN` gives (read only once the sensor is known to be usable) and returns
    /// the unlocked biometry key. With `former`, the PIN is checked against the enrollment the last
    /// factory reset retired (recovering the account's key on a reset device).
    func verify(_ prompt: UserPrompt, former: Bool = false,
                readPIN: () throws(AuthenticatorError) -> SecureBytes) throws(AuthenticatorError) -> Unlock {
        let device = try record()
        guard let enrollment = former ? device.formerEnrollment : device.enrollment else {
            throw AuthenticatorError(.notHandled, former ? "device '\(device.name)' has no former PIN to recover with"
                : "no biometric PIN is enrolled on device '\(device.name)'")
        }
        guard !device.lockedOut else {
            throw AuthenticatorError(.biometryLockout,
                "biometry on '\(device.name)' is locked out after \(device.failures) failed attempts; unlock it with the vault passphrase ('authctl biometry unlock')")
        }
        let pin = try readPIN()
        guard let unlock = try attempt(pin, enrollment, device, remembering: !former) else {
            let left = device.maxAttempts - min(device.failures + 1, device.maxAttempts)
            throw AuthenticatorError(.failed, "the biometric PIN did not match; " + (left == 0
                ? "biometry is now locked out until 'authctl biometry unlock'"
                : "\(left) attempt\(left == 1 ? "" : "s") left before lockout"))
        }
        return unlock
    }

    /// What one PIN did at the sensor (``check(_:)``).
    enum Check {
        /// Right: the biometry key it unwrapped.
        case unlocked(Unlock)
        /// Wrong, and counted: `left` attempts remain before lockout (0: locked out by this one).
        case wrong(left: UInt32)
        /// Locked out before this PIN was looked at; nothing counted.
        case lockedOut
        /// No PIN is enrolled on the device.
        case notEnrolled
    }

    /// ``verify(_:former:readPIN:)`` of a PIN in hand, its outcome as a value rather than an
    /// error: for a caller with answers of its own for each (a security key's CTAP status codes).
    func check(_ pin: SecureBytes) throws(AuthenticatorError) -> Check {
        let device = try record()
        guard let enrollment = device.enrollment else { return .notEnrolled }
        guard !device.lockedOut else { return .lockedOut }
        guard let unlock = try attempt(pin, enrollment, device, remembering: true) else {
            return .wrong(left: device.maxAttempts - min(device.failures + 1, device.maxAttempts))
        }
        return .unlocked(unlock)
    }

    /// Tries `pin` against `enrollment` and counts the outcome: the unlocked key, or `nil` for a
    /// wrong PIN. Checked in full: one commit per guess, made before its outcome shows: one more
    /// failure for a wrong PIN, none for a right one. A process that dies, or a write that fails,
    /// before that commit reveals nothing of the guess (both outcomes write the same record), so
    /// no wrong guess is ever learned uncounted.
    ///
    /// `remembering` (the device's current enrollment): when the account holds a ``Memory`` of
    /// this very enrollment, the PIN is compared with its verifier instead: a wrong one is
    /// counted as above (the commit made before the outcome shows), and a right one commits only
    /// when it clears a count that was not 0 — with nothing to change it writes nothing. There a
    /// failed write does tell a wrong guess (a right one would have written nothing), so the
    /// first such failure forgets what was kept: one guess at most goes uncounted for each right
    /// PIN committed in full. A right PIN checked in full is remembered once its commit is made.
    private func attempt(_ pin: SecureBytes, _ enrollment: BiometryEnrollment, _ device: DeviceRecord,
                         remembering: Bool) throws(AuthenticatorError) -> Unlock? {
        if remembering, let kept = account.checkedPINs[deviceId] {
            if kept.enrollment == enrollment {
                let right = ProcessVerifier.of(pin: pin) == kept.verifier  // constant time
                if !right || device.failures != 0 {
                    do { try setFailures(right ? 0 : device.failures + 1) } catch {
                        // A right PIN with a count of 0 writes nothing, so a counting write that
                        // fails here tells this guess was wrong without counting it. Forget what
                        // was kept: from now on every check runs in full, where both outcomes
                        // write the same record, until a right PIN is committed again.
                        account.checkedPINs[deviceId] = nil
                        throw error
                    }
                }
                return right ? kept.unlock : nil
            }
            // Re-enrolled, reset or replaced since: what was kept says nothing of this enrollment.
            account.forgetCheckedPIN(of: deviceId)
        }
        let key: SecureBytes?
        do { key = try account.vault.unlockBiometry(pin: pin, enrollment) } catch { throw AuthenticatorError(error) }
        try setFailures(key == nil ? device.failures + 1 : 0)
        guard let key else { return nil }
        let unlock = Unlock(biometryKey: key)
        if remembering {
            account.checkedPINs[deviceId] = Memory(enrollment: enrollment, verifier: ProcessVerifier.of(pin: pin), unlock: unlock)
        }
        return unlock
    }

    private func setFailures(_ failures: UInt32) throws(AuthenticatorError) {
        do {
            try DeviceRecord.update(deviceId, in: account.vault) { r throws(VaultError) in r.setInteger(DeviceRecord.Tag.failures, failures) }
        } catch { throw AuthenticatorError(error) }
    }

    /// Clears the failure count (the vault passphrase is the proof, as the device passcode is on a
    /// phone).
    func unlock() throws(VaultError) {
        try DeviceRecord.update(deviceId, in: account.vault) { r throws(VaultError) in r.setInteger(DeviceRecord.Tag.failures, UInt32(0)) }
    }

    /// Makes `enrollment` this device's, clearing the count, and commits `others` (passkeys dropped
    /// with an old key) in the same frame.
    func enroll(_ enrollment: BiometryEnrollment, committing others: [VaultRecord] = []) throws(VaultError) {
        account.forgetCheckedPIN(of: deviceId)  // the old PIN's verifier, and after a reset the old key
        try DeviceRecord.update(deviceId, in: account.vault, with: others) { r throws(VaultError) in
            DeviceRecord.setEnrollment(enrollment, in: &r)
            DeviceRecord.setFormerEnrollment(nil, in: &r)
            r.setInteger(DeviceRecord.Tag.failures, UInt32(0))
        }
    }
}
