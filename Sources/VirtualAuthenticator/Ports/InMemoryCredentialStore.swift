/// A store in memory, for tests and in-process use. It asks for the same proof the vault does: a
/// passkey made with user verification is stored and used only with a ``ScriptedUser``'s
/// verification in hand. Not `Sendable`: it is one ceremony's store, used from one thread.
public final class InMemoryCredentialStore: CredentialStore {
    public typealias Verification = ScriptedUser.Verified
    public private(set) var stored: [(Credential, PrivateKey)] = []
    public private(set) var globalCount: UInt32 = 0

    public init() {}

    public func credentials(forRP rpId: String) throws(AuthenticatorError) -> [Credential] {
        stored.compactMap { $0.0.rpId == rpId ? $0.0 : nil }
    }

    public func privateKey(for credential: Credential, verification: Verification?) throws(AuthenticatorError) -> PrivateKey {
        guard let key = stored.first(where: { $0.0.id == credential.id })?.1 else {
            throw AuthenticatorError(.notHandled, "credential is gone")
        }
        try Self.requireVerification(for: credential, verification)
        return key
    }

    public func save(_ credential: Credential, privateKey: PrivateKey, replacing: [Credential],
                     verification: Verification?) throws(AuthenticatorError) {
        try Self.requireVerification(for: credential, verification)
        stored.removeAll { entry in replacing.contains { $0.id == entry.0.id } }
        stored.append((credential, privateKey))
    }

    public func updateSignCount(of credential: Credential, to count: UInt32) throws(AuthenticatorError) {
        guard let index = stored.firstIndex(where: { $0.0.id == credential.id }) else {
            throw AuthenticatorError(.notHandled, "credential is gone")
        }
        stored[index].0.signCount = count
        if credential.globalCounter { globalCount = count }
    }

    public func globalSignCount() throws(AuthenticatorError) -> UInt32 { globalCount }
    public func storeLargeBlob(_ sealedBlob: [UInt8], of credential: Credential) throws(AuthenticatorError) {
        guard let index = stored.firstIndex(where: { $0.0.id == credential.id }) else {
            throw AuthenticatorError(.notHandled, "credential is gone")
        }
        stored[index].0.largeBlob = sealedBlob
    }

    private static func requireVerification(for credential: Credential, _ verification: Verification?) throws(AuthenticatorError) {
        if credential.requiresUserVerification, verification == nil {
            throw AuthenticatorError(.failed, "this passkey needs user verification")
        }
    }
}
