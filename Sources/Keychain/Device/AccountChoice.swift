import VirtualAuthenticator

/// Which account the user picks when several passkeys could sign in: a credential id, a user (by
/// name or base64url user handle), both, or neither (the most recently created one).
public struct AccountChoice: Sendable, Equatable {
    public var credentialId: [UInt8]?
    public var user: String?

    public init(credentialId: [UInt8]? = nil, user: String? = nil) {
        self.credentialId = credentialId
        self.user = user
    }

    /// The most recently created candidate, as a phone's picker offers first.
    public static let newest = AccountChoice()

    /// Whether this choice allows `credential`, by the rule ``pick(from:)`` finds it by: its
    /// credential id, when one is given, and its user, by name or by base64url user handle, when
    /// one is given (either matches).
    public func allows(_ credential: Credential) -> Bool {
        guard credentialId.map({ credential.id == $0 }) ?? true else { return false }
        guard let user else { return true }
        return credential.userName == user || Base64URL.encode(credential.userHandle) == user
    }

    /// The newest of `candidates` this choice allows, found through the candidates' lookups (by
    /// credential id, by user name or handle), not by a pass over them.
    func pick(from candidates: AccountCandidates) throws(AuthenticatorError) -> Credential {
        guard credentialId != nil || user != nil else { return candidates.newest }
        // A user handle matches only as its own base64url spelling: `user` decoded, and kept when
        // it encodes back to `user` (a passkey with that handle encodes to the same text).
        let handle = user.flatMap { user in Base64URL.decode(user).flatMap { Base64URL.encode($0) == user ? $0 : nil } }
        guard let picked = candidates.newest(credentialId: credentialId, userName: user, userHandle: handle) else {
            let wanted = [credentialId.map { "credential \(EchoedInput.base64URL($0))" }, user.map { "user \(EchoedInput.text($0))" }]
            throw AuthenticatorError(.notHandled, "no candidate passkey matches " + wanted.compactMap { $0 }.joined(separator: " and "))
        }
        return picked
    }
}
