import KeyVault
import VirtualAuthenticator

/// authenticatorCredentialManagement (CTAP 2.1 §6.8) on a device answering as a security key: a
/// client that holds a PIN token lists the key's credentials, deletes one, or renames its user.
/// Only the discoverable credentials the key holds (``keyCredentials(rpId:discoverableOnly:)``)
/// are managed: a device-bound key never reaches the passkeys the account's phones sync to it,
/// and a credential made with `rk` false is reached only through an allow list.
extension Device {
    /// The credential with id `id` that this key holds (`noSuchCredential` otherwise), found
    /// through the vault's credential-id lookup.
    private func keyCredential(id: [UInt8]) throws(DeviceError) -> (Credential, ViewCredentialStore) {
        let store = try store()
        let (profile, _) = try account.profile(of: try record())
        let held: [DeviceView.Item]
        do { held = try store.items(credentialId: id) } catch { throw DeviceError(error) }
        guard let credential = held.map(\.credential).first(where: { $0.id == id && $0.discoverable && keyHolds($0, profile: profile) }) else {
            throw DeviceError.noPasskey(id, on: name)
        }
        return (credential, store)
    }

    /// deleteCredential: the key's credential `id` is deleted (a removal revision).
    public func keyDeleteCredential(id: [UInt8]) throws(DeviceError) {
        let (credential, store) = try keyCredential(id: id)
        do { try store.delete([credential]) } catch { throw DeviceError(error) }
    }

    /// updateUserInformation: the user name and display name of the key's credential `id`
    /// replaced (an empty one removed), in a new revision. `userHandle` must be the credential's
    /// own (`invalidArgument` otherwise: a client cannot move a credential to another user).
    @discardableResult
    public func keyUpdateUser(credentialId id: [UInt8], userHandle: [UInt8], name: String, displayName: String) throws(DeviceError) -> Credential {
        let (credential, store) = try keyCredential(id: id)
        guard credential.userHandle == userHandle else {
            throw DeviceError(.invalidArgument, "the user id given is not the credential's user id")
        }
        do {
            return try store.revise(credential) {
                $0.userName = name
                $0.userDisplayName = displayName
            }
        } catch { throw DeviceError(error) }
    }

    /// The largeBlobKey of the key's credential `id` (``LargeBlob/key(of:)``), or `nil` when it
    /// was made without one. A credential sealed under the biometry key opens only with
    /// `verification`, the PIN token's.
    public func keyLargeBlobKey(credentialId id: [UInt8], verification: KeyVerification?) throws(DeviceError) -> [UInt8]? {
        let (credential, store) = try keyCredential(id: id)
        guard credential.hasLargeBlobKey else { return nil }
        let key: PrivateKey
        do { key = try store.privateKey(for: credential, verification: verification?.unlock) } catch { throw DeviceError(error) }
        do { return try LargeBlob.key(of: key) } catch {
            throw DeviceError(.authenticator(.unknown), "OpenSSL could not derive the largeBlobKey: \(error)")
        }
    }
}
