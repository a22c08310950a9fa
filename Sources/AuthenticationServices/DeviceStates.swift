import Session

/// What the person at the phone does when it falls back to the passcode: after Face ID does not
/// match ("After failed Face ID attempts, the system offers a fallback option, but stops trying to
/// authenticate with Face ID": LAPolicy.deviceOwnerAuthenticationWithBiometrics), or at once
/// while Face ID is locked out (after 5 failed matches in a row: LAEnvironment's `isLockedOut`).
public enum PasscodeFallback: Sendable, Equatable {
    /// Dismisses the passcode prompt: the request ends `.canceled`, as a cancel there does.
    case dismiss
    /// Types the passcode: the request goes on, verified by it, and a Face ID lockout is lifted
    /// ("To recover from bio lockout, users need to enter their passcode").
    case enterPasscode
}

extension AuthenticationServicesHost {
    /// Why this phone cannot make a passkey, before anything is shown: it has no passcode (no PIN
    /// enrolled: iCloud Keychain needs one), or iCloud Keychain is off (no passkey support). iOS 26
    /// says so with `.deviceNotConfiguredForPasskeyCreation` ("the device is not currently set up
    /// to create passkeys"); earlier versions with `.failed`.
    func creationRefusal() -> ASAuthorizationError? {
        if (try? session.passkeysSupported(device: device)) == false {
            return ASAuthorizationError(.deviceNotConfiguredForPasskeyCreation, failureReason: "Cannot create a passkey. iCloud Keychain is off.")
        }
        if (try? session.biometry(device: device))?.enrolled == false {
            return ASAuthorizationError(.deviceNotConfiguredForPasskeyCreation, failureReason: Self.notConfigured)
        }
        return nil
    }

    /// Why this phone cannot sign in with a passkey: it has no passcode, so it cannot verify its
    /// user (iCloud Keychain's passkeys are always used with Face ID or the passcode).
    func signInRefusal() -> ASAuthorizationError? {
        (try? session.biometry(device: device))?.enrolled == false ? ASAuthorizationError(.failed, failureReason: Self.notConfigured) : nil
    }

    /// What iOS logs for a passkey request on a device without biometry or passcode ("Device not
    /// configured for passkey requests", with LocalAuthentication's error -7): the reason given here.
    static let notConfigured = "Device not configured for passkey requests."

    /// A ceremony verified as iOS verifies its user: Face ID first (the device's PIN, as the
    /// person gives it); when it does not match, or is locked out, the passcode, as
    /// ``passcodeFallback`` says. Each Face ID attempt counts toward the device's lockout; the
    /// passcode is the PIN the people know.
    func verifyingOwner<T>(_ ceremony: (PersonRequest) throws(SessionError) -> T) throws(SessionError) -> T {
        do {
            return try ceremony(person)
        } catch let error where error.name == .failed || error.name == .biometryLockout {
            // `failed` is a PIN that did not match (docs/errors.md): Face ID is not tried again.
            guard passcodeFallback == .enterPasscode else { throw SessionError(.canceled, "the passcode prompt was dismissed") }
            // The passcode lifts a lockout, this Face ID failure's own included.
            if try session.biometry(device: device).lockedOut { try session.change(.unlockBiometry, device: try session.deviceName(device)) }
            return try ceremony(PersonRequest(action: .approve, account: person.account, instantTimeout: person.instantTimeout))
        }
    }
}
