/// A user whose answers are fixed in advance, for tests.
public struct ScriptedUser: UserInteraction {
    /// The proof a scripted verification gives: that it happened.
    public struct Verified: Sendable {}

    public var canVerify: Bool
    public var presence: AuthenticatorError?
    public var verification: AuthenticatorError?

    public init(canVerify: Bool = true, presence: AuthenticatorError? = nil, verification: AuthenticatorError? = nil) {
        self.canVerify = canVerify
        self.presence = presence
        self.verification = verification
    }

    /// The newest candidate, as a phone's picker offers first.
    public func selectAccount(from candidates: AccountCandidates, for prompt: UserPrompt) throws(AuthenticatorError) -> Credential {
        candidates.newest
    }

    public func confirmPresence(_ prompt: UserPrompt) throws(AuthenticatorError) { if let presence { throw presence } }

    public func verifyUser(_ prompt: UserPrompt) throws(AuthenticatorError) -> Verified {
        if let verification { throw verification }
        return Verified()
    }
}
