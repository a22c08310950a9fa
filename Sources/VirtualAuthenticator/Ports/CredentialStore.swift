/// Where passkeys live (the synced keychain). The authenticator knows only this protocol; the
/// Keychain module implements it over the encrypted vault, ``InMemoryCredentialStore`` in memory.
///
/// A passkey made with user verification can only be used, or stored, with the proof of that
/// verification the ``UserInteraction`` port returned (its `Verification`): the store is handed
/// that value, never a flag, so no step can reach the key without it.
public protocol CredentialStore {
    /// What a successful user verification produced (for the vault: the unwrapped biometry key).
    associatedtype Verification
    /// The RP's passkeys as a discoverable sign-in reads them (``credentialList(forRP:)``).
    associatedtype List: CredentialList = CredentialArray

    /// Every credential scoped to `rpId`, in creation order (oldest first).
    func credentials(forRP rpId: String) throws(AuthenticatorError) -> [Credential]
    /// The same credentials, in the same order, read where they are: what a sign-in without an
    /// allow list chooses among. A store that keeps the RP's passkeys indexed answers its lookups
    /// without a scan and without copying them.
    func credentialList(forRP rpId: String) throws(AuthenticatorError) -> List
    /// The credentials of `rpId` whose ids are in `ids`, in creation order, each once: what an
    /// allow list or an exclude list names. A store that keeps an index answers without a scan.
    func credentials(forRP rpId: String, ids: [[UInt8]]) throws(AuthenticatorError) -> [Credential]
    /// The credentials of `rpId` for user `userHandle`, in creation order: what a new passkey of
    /// that user replaces.
    func credentials(forRP rpId: String, userHandle: [UInt8]) throws(AuthenticatorError) -> [Credential]
    /// The private key of a stored credential, decrypted only for the signature at hand.
    /// `verification` is present when the user was verified in this ceremony.
    func privateKey(for credential: Credential, verification: Verification?) throws(AuthenticatorError) -> PrivateKey
    /// Stores a new credential and, in the same atomic step, deletes `replacing` (the passkey the
    /// same RP and user handle had before, WebAuthn L3 §6.3.2 step 7.5 for discoverable credentials).
    func save(_ credential: Credential, privateKey: PrivateKey, replacing: [Credential],
              verification: Verification?) throws(AuthenticatorError)
    /// Durably records a counting credential's new signature count (for a credential on the
    /// global counter, the global counter's too, in the same write).
    func updateSignCount(of credential: Credential, to count: UInt32) throws(AuthenticatorError)
    /// The authenticator's global signature counter (``SignCounter/global``): its last value.
    func globalSignCount() throws(AuthenticatorError) -> UInt32
    /// Durably records a credential's large blob, already sealed (``LargeBlob``): a change to the
    /// passkey like a new signature count.
    func storeLargeBlob(_ sealedBlob: [UInt8], of credential: Credential) throws(AuthenticatorError)
}

extension CredentialStore where List == CredentialArray {
    /// ``credentials(forRP:)`` in an array.
    public func credentialList(forRP rpId: String) throws(AuthenticatorError) -> CredentialArray {
        CredentialArray(try credentials(forRP: rpId))
    }
}

extension CredentialStore {
    /// By a scan of ``credentials(forRP:)``.
    public func credentials(forRP rpId: String, ids: [[UInt8]]) throws(AuthenticatorError) -> [Credential] {
        guard !ids.isEmpty else { return [] }
        return try credentials(forRP: rpId).filter { ids.contains($0.id) }
    }

    /// By a scan of ``credentials(forRP:)``.
    public func credentials(forRP rpId: String, userHandle: [UInt8]) throws(AuthenticatorError) -> [Credential] {
        try credentials(forRP: rpId).filter { $0.userHandle == userHandle }
    }
}
