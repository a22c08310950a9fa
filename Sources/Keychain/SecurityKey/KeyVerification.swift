import KeyVault
import VirtualAuthenticator

/// What a right PIN established on a device answering as a security key: the biometry key its
/// check unwrapped (the key's clientPIN is the device's biometric PIN). The CTAP front end holds
/// it with the pinUvAuthToken it issued, for as long as the key has power, and hands it back with
/// each request the token authorizes: a credential sealed under the biometry key opens with it,
/// and nothing else makes one.
public struct KeyVerification {
    let unlock: BiometricSensor.Unlock

    init(_ unlock: BiometricSensor.Unlock) { self.unlock = unlock }
}

/// The person at a device answering as a security key, as the CTAP front end tells it: presence
/// is a touch it waits for (`touch` throws `canceled` or `timedOut`), verification is what a PIN
/// token established (`verification`), and the account is the one the key picked.
public struct KeyPerson {
    public var touch: (UserPrompt) throws(AuthenticatorError) -> Void
    public var verification: KeyVerification?

    public init(touch: @escaping (UserPrompt) throws(AuthenticatorError) -> Void, verification: KeyVerification? = nil) {
        self.touch = touch
        self.verification = verification
    }
}

/// ``KeyPerson`` as the authenticator's user port.
struct KeyUser: UserInteraction {
    let person: KeyPerson
    /// The credential the key answers with (`nil`: the newest candidate).
    let pick: [UInt8]?

    var canVerify: Bool { person.verification != nil }

    func selectAccount(from candidates: AccountCandidates, for prompt: UserPrompt) throws(AuthenticatorError) -> Credential {
        guard let pick else { return candidates.newest }
        guard let picked = candidates.newest(credentialId: pick) else {
            throw AuthenticatorError(.notHandled, "the credential the key picked is no longer a candidate")
        }
        return picked
    }

    func confirmPresence(_ prompt: UserPrompt) throws(AuthenticatorError) { try person.touch(prompt) }

    func verifyUser(_ prompt: UserPrompt) throws(AuthenticatorError) -> BiometricSensor.Unlock {
        guard let verification = person.verification else {
            throw AuthenticatorError(.notInteractive, "user verification needs a PIN token, and the request carries none")
        }
        return verification.unlock
    }
}
