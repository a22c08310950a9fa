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

    func pick(from candidates: [Credential]) throws(AuthenticatorError) -> Credential {
        var matching = candidates
        if let credentialId { matching = matching.filter { $0.id == credentialId } }
        if let user {
            // The handle compared as bytes first: encoding every candidate's would cost a sign-in
            // among thousands of passkeys as much as the signature.
            let handle = Base64URL.decode(user)
            matching = matching.filter { $0.userName == user || ($0.userHandle == handle && Base64URL.encode($0.userHandle) == user) }
        }
        guard !matching.isEmpty else {
            let wanted = [credentialId.map { "credential \(EchoedInput.base64URL($0))" }, user.map { "user \(EchoedInput.text($0))" }]
            throw AuthenticatorError(.notHandled, "no candidate passkey matches " + wanted.compactMap { $0 }.joined(separator: " and "))
        }
        return try Credential.newest(of: matching)
    }
}
