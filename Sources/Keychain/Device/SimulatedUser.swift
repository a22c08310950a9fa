import KeyVault
import VirtualAuthenticator

/// The person at the device, as the authenticator's user port: picks the account and answers the
/// prompt as the ``UserPolicy`` says, and verifies through the ``BiometricSensor``, handing back
/// the unlocked biometry key as proof.
struct SimulatedUser: UserInteraction {
    let sensor: BiometricSensor
    let policy: UserPolicy

    /// WebAuthn's recommended default when the options give no timeout (L3 §5.4, `timeout`).
    static let defaultTimeoutMilliseconds = 300_000

    var canVerify: Bool { sensor.enrolled }

    func selectAccount(from candidates: AccountCandidates, for prompt: UserPrompt) throws(AuthenticatorError) -> Credential {
        try policy.account.pick(from: candidates)
    }

    func confirmPresence(_ prompt: UserPrompt) throws(AuthenticatorError) {
        switch policy.action {
        case .approve, .wrongPIN: return
        case .cancel:
            throw AuthenticatorError(.canceled, "the user canceled the \(prompt.ceremony.rawValue) prompt for \(prompt.rpId)")
        case .timeout:
            let milliseconds = prompt.timeoutMilliseconds ?? Self.defaultTimeoutMilliseconds
            policy.wait(.milliseconds(milliseconds))
            throw AuthenticatorError(.timedOut, "the user did not answer the \(prompt.ceremony.rawValue) prompt within \(milliseconds) ms")
        }
    }

    func outwait(_ prompt: UserPrompt) -> AuthenticatorError {
        let milliseconds = prompt.timeoutMilliseconds ?? Self.defaultTimeoutMilliseconds
        policy.wait(.milliseconds(milliseconds))
        return AuthenticatorError(.timedOut, "the \(prompt.ceremony.rawValue) request for \(prompt.rpId) stayed pending until its timeout (\(milliseconds) ms)")
    }

    func verifyUser(_ prompt: UserPrompt) throws(AuthenticatorError) -> BiometricSensor.Unlock {
        try sensor.verify(prompt) { () throws(AuthenticatorError) in
            // The wrong finger: 32 zero bytes, never an enrolled PIN (PINs are checked on enrollment).
            policy.action == .wrongPIN ? SecureBytes(count: 32) : try policy.pin(prompt)
        }
    }
}
