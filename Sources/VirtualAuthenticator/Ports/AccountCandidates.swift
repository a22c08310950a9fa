/// The passkeys a sign-in may offer, as the account picker
/// (``UserInteraction/selectAccount(from:for:)``) sees them: the RP's passkeys (a
/// ``CredentialList``), or those its allow list names, less those the ceremony may not offer —
/// hidden by the RP's signal, or held back by credProtect (CTAP 2.1 §12.1). Never empty.
///
/// Nothing is copied out of the store to make it. The newest candidate is the list's to find
/// (``CredentialList/newest(where:)``: by default looking back from the RP's newest passkey; a
/// store may find it without reading the RP whole), a credential id or a user through the list's
/// lookups; iterating
/// gives every candidate, oldest first, for a picker that really shows them all.
public struct AccountCandidates: Sequence {
    private let list: any CredentialList
    private let userVerified: Bool
    private let listed: Bool
    /// The most recently created candidate: what a picker offers first, and takes by default.
    public let newest: Credential

    /// The candidates among `list` of a ceremony that will (not) verify the user, where the RP did
    /// (not) list the ids; `nil` when there is none. The newest is the list's to find
    /// (``CredentialList/newest(where:)``), so finding it may read (and fail to read) the store.
    package init?(_ list: some CredentialList, userVerified: Bool, listed: Bool) throws(AuthenticatorError) {
        self.list = list
        self.userVerified = userVerified
        self.listed = listed
        guard let newest = try list.newest(where: { Self.offers($0, userVerified: userVerified, listed: listed) }) else { return nil }
        self.newest = newest
    }

    /// Whether a ceremony that will (not) verify the user, and did (not) list ids, may offer `credential`.
    private static func offers(_ credential: Credential, userVerified: Bool, listed: Bool) -> Bool {
        !credential.hidden && (listed || credential.discoverable) && credential.isVisible(userVerified: userVerified, listed: listed)
    }

    /// The newest candidate whose credential id is `credentialId`, when one is given, and whose
    /// user is the one named `userName` or the one with handle `userHandle`, when either is given
    /// (a candidate of either matches); `nil` when no candidate is. With nothing given, ``newest``.
    public func newest(credentialId: [UInt8]? = nil, userName: String? = nil, userHandle: [UInt8]? = nil) -> Credential? {
        let anyUser = userName == nil && userHandle == nil
        let positions: [Int]
        if let credentialId {
            positions = list.positions(credentialId: credentialId)
        } else if !anyUser {
            // A passkey can match by both; each position once, in order.
            let byName = userName.map { list.positions(userName: $0) } ?? []
            let byHandle = userHandle.map { list.positions(userHandle: $0) } ?? []
            positions = byHandle.isEmpty ? byName : byName.isEmpty ? byHandle : Set(byName).union(byHandle).sorted()
        } else {
            return newest
        }
        for position in positions.reversed() {
            let credential = list.credential(at: position)
            guard Self.offers(credential, userVerified: userVerified, listed: listed) else { continue }
            if credentialId.map({ credential.id == $0 }) ?? true,
               anyUser || credential.userName == userName || credential.userHandle == userHandle {
                return credential
            }
        }
        return nil
    }

    public func makeIterator() -> Iterator { Iterator(candidates: self) }

    /// The candidates, oldest first.
    public struct Iterator: IteratorProtocol {
        let candidates: AccountCandidates
        var position = 0

        public mutating func next() -> Credential? {
            while position < candidates.list.count {
                let credential = candidates.list.credential(at: position)
                position += 1
                if AccountCandidates.offers(credential, userVerified: candidates.userVerified, listed: candidates.listed) {
                    return credential
                }
            }
            return nil
        }
    }
}
