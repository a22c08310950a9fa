/// The person in front of the authenticator: presence (a tap, a glance) and verification (the
/// simulated biometric). The CLI answers from flags, environment and the vault's biometry key;
/// tests script it with ``ScriptedUser``.
public protocol UserInteraction {
    /// Whether user verification is configured (a biometric PIN is enrolled).
    var canVerify: Bool { get }
    /// Collects user presence for `purpose`; throws (e.g. `canceled`) when the user declines.
    func confirmPresence(_ purpose: UserPrompt) throws
    /// Performs user verification; throws `failed` on a wrong PIN, `notInteractive` when no PIN
    /// can be obtained. Returns only when the user was verified.
    func verifyUser(_ purpose: UserPrompt) throws
}

/// What the user is being asked about, as an authenticator's prompt would say it.
public struct UserPrompt: Sendable, Equatable {
    public enum Ceremony: String, Sendable { case registration, authentication }
    public let ceremony: Ceremony
    public let rpId: String
    public let userName: String?
    /// How long the RP lets the prompt stay up (the options' `timeout`), in milliseconds.
    public let timeoutMilliseconds: Int?

    public init(ceremony: Ceremony, rpId: String, userName: String?, timeoutMilliseconds: Int? = nil) {
        self.ceremony = ceremony
        self.rpId = rpId
        self.userName = userName
        self.timeoutMilliseconds = timeoutMilliseconds
    }
}

/// A user whose answers are fixed in advance, for tests.
public struct ScriptedUser: UserInteraction {
    public var canVerify: Bool
    public var presence: AuthenticatorError?
    public var verification: AuthenticatorError?

    public init(canVerify: Bool = true, presence: AuthenticatorError? = nil, verification: AuthenticatorError? = nil) {
        self.canVerify = canVerify
        self.presence = presence
        self.verification = verification
    }

    public func confirmPresence(_ purpose: UserPrompt) throws { if let presence { throw presence } }
    public func verifyUser(_ purpose: UserPrompt) throws { if let verification { throw verification } }
}
