/// The person in front of the authenticator: choosing an account, presence (a tap, a glance) and
/// verification (the simulated biometric). The Keychain module answers from its user policy and
/// the vault's biometric enrollment; tests script it with ``ScriptedUser``.
public protocol UserInteraction {
    /// What a successful verification establishes, handed to the ``CredentialStore``.
    associatedtype Verification

    /// Whether user verification is configured (a biometric PIN is enrolled).
    var canVerify: Bool { get }
    /// The account picker: one of `candidates` (never empty; ``AccountCandidates/newest`` is the
    /// one a picker offers first) for `prompt`.
    func selectAccount(from candidates: AccountCandidates, for prompt: UserPrompt) throws(AuthenticatorError) -> Credential
    /// Collects user presence for `prompt`; throws (e.g. `canceled`) when the user declines.
    func confirmPresence(_ prompt: UserPrompt) throws(AuthenticatorError)
    /// Performs user verification; throws `failed` on a wrong PIN, `notInteractive` when no PIN
    /// can be obtained. Returns the proof the store needs for passkeys made with verification.
    func verifyUser(_ prompt: UserPrompt) throws(AuthenticatorError) -> Verification
    /// The call stays pending (a conditional sign-in nobody picks a passkey for, a request no
    /// authenticator here may answer): waits out `prompt`'s timeout and returns the error the
    /// call then ends with.
    func outwait(_ prompt: UserPrompt) -> AuthenticatorError
}

extension UserInteraction {
    public func outwait(_ prompt: UserPrompt) -> AuthenticatorError {
        AuthenticatorError(.timedOut, "the \(prompt.ceremony.rawValue) request for \(prompt.rpId) stayed pending until its timeout")
    }
}
