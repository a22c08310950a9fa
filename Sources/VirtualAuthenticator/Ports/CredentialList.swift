/// One RP's passkeys as a ``CredentialStore`` holds them, read in place rather than copied out: a
/// position in creation order (0 the oldest, `count - 1` the newest), and the positions that hold
/// a credential id, a user name or a user handle. A discoverable sign-in asks it for the few
/// passkeys its account picker looks at (``AccountCandidates``), so that an RP with thousands of
/// users does not cost a copy of every passkey per sign-in.
///
/// Hidden passkeys and every credProtect level are in it: the authenticator leaves out what a
/// ceremony may not offer.
public protocol CredentialList {
    /// How many passkeys the RP has.
    var count: Int { get }
    /// The passkey at `position` (`0 ..< count`, in creation order).
    func credential(at position: Int) -> Credential
    /// The positions, ascending, of every passkey whose credential id is `id` (as a rule one).
    func positions(credentialId id: [UInt8]) -> [Int]
    /// The positions, ascending, of every passkey whose user name is `name`.
    func positions(userName name: String) -> [Int]
    /// The positions, ascending, of every passkey whose user handle is `handle`.
    func positions(userHandle handle: [UInt8]) -> [Int]
    /// The newest passkey (the highest position) for which `wanted` holds; `nil` when none does.
    /// What a discoverable sign-in's default account is found by (``AccountCandidates/newest``):
    /// a store that can find it without reading its whole list — an RP of many passkeys — does it
    /// here; by default, a look back from the newest.
    func newest(where wanted: (Credential) -> Bool) throws(AuthenticatorError) -> Credential?
}

extension CredentialList {
    public func newest(where wanted: (Credential) -> Bool) throws(AuthenticatorError) -> Credential? {
        var position = count - 1
        while position >= 0 {
            let credential = credential(at: position)
            if wanted(credential) { return credential }
            position -= 1
        }
        return nil
    }
}

/// A ``CredentialList`` over credentials already in an array in creation order: a store that
/// keeps no indexes (``InMemoryCredentialStore``), and an allow list's few credentials. Each
/// lookup is a scan.
public struct CredentialArray: CredentialList {
    public let credentials: [Credential]

    /// `credentials` in creation order, oldest first.
    public init(_ credentials: [Credential]) { self.credentials = credentials }

    public var count: Int { credentials.count }
    public func credential(at position: Int) -> Credential { credentials[position] }
    public func positions(credentialId id: [UInt8]) -> [Int] { credentials.indices.filter { credentials[$0].id == id } }
    public func positions(userName name: String) -> [Int] { credentials.indices.filter { credentials[$0].userName == name } }
    public func positions(userHandle handle: [UInt8]) -> [Int] { credentials.indices.filter { credentials[$0].userHandle == handle } }
}
