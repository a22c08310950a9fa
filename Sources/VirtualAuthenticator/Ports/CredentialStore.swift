/// Where passkeys live (the synced keychain). The authenticator knows only this protocol; the
/// encrypted vault implements it in the CLI's adapter, ``InMemoryCredentialStore`` in tests.
public protocol CredentialStore {
    /// Every credential scoped to `rpId`, in creation order (oldest first).
    func credentials(forRP rpId: String) throws -> [Credential]
    /// The private key of a stored credential, decrypted only for the signature at hand.
    func privateKey(for credential: Credential) throws -> P256PrivateKey
    /// Stores a new credential and, in the same atomic step, deletes `replacing` (the passkey the
    /// same RP and user handle had before, WebAuthn L3 §6.3.2 step 7.5 for discoverable credentials).
    func save(_ credential: Credential, privateKey: P256PrivateKey, replacing: [Credential]) throws
    /// Durably records a counting credential's new signature count.
    func updateSignCount(of credential: Credential, to count: UInt32) throws
}

/// A store in memory, for tests and in-process use.
public final class InMemoryCredentialStore: CredentialStore, @unchecked Sendable {
    public private(set) var stored: [(Credential, P256PrivateKey)] = []

    public init() {}

    public func credentials(forRP rpId: String) throws -> [Credential] {
        stored.map(\.0).filter { $0.rpId == rpId }
    }

    public func privateKey(for credential: Credential) throws -> P256PrivateKey {
        guard let key = stored.first(where: { $0.0.id == credential.id })?.1 else {
            throw AuthenticatorError(.notHandled, "credential is gone")
        }
        return key
    }

    public func save(_ credential: Credential, privateKey: P256PrivateKey, replacing: [Credential]) throws {
        stored.removeAll { entry in replacing.contains { $0.id == entry.0.id } }
        stored.append((credential, privateKey))
    }

    public func updateSignCount(of credential: Credential, to count: UInt32) throws {
        guard let index = stored.firstIndex(where: { $0.0.id == credential.id }) else {
            throw AuthenticatorError(.notHandled, "credential is gone")
        }
        stored[index].0.signCount = count
    }
}
