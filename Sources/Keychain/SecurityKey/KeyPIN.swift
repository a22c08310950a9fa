import KeyVault
import VirtualAuthenticator

/// A security key's PIN (CTAP 2.1 §6.5, authenticatorClientPIN) is its device's biometric PIN,
/// kept in the vault: set, changed and checked over CTAP, it survives restarts of the key with its
/// failure count, and `authctl biometry status --device key` shows it.
///
/// A client never sends the PIN to be checked, only pinHash, LEFT(SHA-256(PIN), 16) (setPIN and
/// changePIN send the new PIN itself, but getPinToken only its hash). So the biometric PIN a
/// key's PIN stands for is pinHash in 32 lowercase hex digits: the PIN `1234` of a key is the
/// biometric PIN `03ac674216f3e15c761ee1a5e255f067`, which `printf %s 1234 | sha256sum | cut -c1-32`
/// prints. Each check unwraps the account's biometry key with it, as any biometric check does, so
/// a wrong one counts toward the device's lockout in the vault, durably.
public enum KeyPIN {
    /// A key's pinRetries when full (CTAP 2.1 §6.5.5.2): a YubiKey's 8. A device that answers as
    /// a key is made with this many PIN attempts (``AccountSpec``'s security-key device).
    public static let maxRetries: UInt32 = 8
    /// The length of pinHash.
    public static let hashLength = 16

    /// The biometric PIN `pinHash` stands for: its 32 lowercase hex digits.
    public static func biometricPIN(pinHash: [UInt8]) -> SecureBytes {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(pinHash.count * 2)
        for byte in pinHash { text += [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]] }
        return SecureBytes(consuming: &text)
    }
}

/// What a pinHash did when checked against a key's PIN (``Device/verifyKeyPIN(pinHash:)``).
public enum KeyPINCheck: @unchecked Sendable {
    /// Right: the failure count is cleared, and the biometry key the PIN unwrapped is the proof
    /// the key keeps with the token it issues.
    case verified(KeyVerification)
    /// Wrong, and counted: `retries` attempts are left (0: the PIN is blocked now).
    case wrong(retries: UInt32)
    /// The PIN was blocked before (no retries left); the pinHash was not looked at.
    case blocked
    /// No PIN is set.
    case notSet
}

extension Device {
    /// Checks `pinHash` (LEFT(SHA-256(PIN), 16)) against this key's PIN through its biometric
    /// sensor: a wrong one is counted in the vault before the answer is known. Whatever a client's
    /// pinHashEnc decrypts to is checked so, and counted: bytes of another length than 16 are
    /// never right.
    public func verifyKeyPIN(pinHash: [UInt8]) throws(DeviceError) -> KeyPINCheck {
        let sensor = BiometricSensor(account: account, deviceId: id)
        let check: BiometricSensor.Check
        do { check = try sensor.check(KeyPIN.biometricPIN(pinHash: pinHash)) } catch { throw DeviceError(error) }
        switch check {
        case .unlocked(let unlock): return .verified(KeyVerification(unlock))
        case .wrong(let left): return .wrong(retries: left)
        case .lockedOut: return .blocked
        case .notEnrolled: return .notSet
        }
    }

    /// Sets this key's first PIN (setPIN: none is set), from its `pinHash`. The enrollment is a
    /// fresh one, as a key's after a reset, never the former PIN's: with no other device of the
    /// account enrolled, a new biometry key (passkeys of this device sealed under an old one,
    /// which nothing can open, are deleted); with one, the account's key, which `approvedBy`
    /// (default: the first enrolled device) unlocks with `approver`'s PIN, as for any new PIN.
    public func setKeyPIN(pinHash: [UInt8], approvedBy: String? = nil, approver: UserPolicy = UserPolicy()) throws(DeviceError) {
        try Self.checkPINHash(pinHash)
        guard !biometry.enrolled else { throw DeviceError(.invalidArgument, "device '\(name)' has a PIN already; change it") }
        try enrollBiometricPIN(KeyPIN.biometricPIN(pinHash: pinHash), reset: true, approvedBy: approvedBy, approver: approver)
    }

    /// Changes this key's PIN to the one of `pinHash` (changePIN), with the proof that the
    /// current one was just given: the same biometry key, wrapped under the new PIN; the failure
    /// count cleared. Synced after, as every change of a device is.
    public func changeKeyPIN(_ verified: KeyVerification, to pinHash: [UInt8]) throws(DeviceError) {
        try Self.checkPINHash(pinHash)
        let sensor = BiometricSensor(account: account, deviceId: id)
        do {
            try sensor.enroll(try account.vault.enrollBiometry(pin: KeyPIN.biometricPIN(pinHash: pinHash),
                                                               keeping: verified.unlock.biometryKey).0)
        } catch { throw DeviceError(error) }
        do { try account.sync() } catch { throw DeviceError(error) }
    }

    private static func checkPINHash(_ pinHash: [UInt8]) throws(DeviceError) {
        guard pinHash.count == KeyPIN.hashLength else {
            throw DeviceError(.invalidArgument, "a pinHash is \(KeyPIN.hashLength) bytes, not \(pinHash.count)")
        }
    }
}
