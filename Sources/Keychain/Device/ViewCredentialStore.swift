import KeyVault
import VirtualAuthenticator

/// The authenticator's store port for one ceremony on one device: the passkeys are what the device
/// holds now (its ``DeviceView``), and every change is a new revision this device makes — which
/// the account then uploads at its time. A passkey made with user verification is sealed, and
/// opened, under the account's biometry key, which only a ``BiometricSensor/Unlock`` from this
/// ceremony provides.
final class ViewCredentialStore: CredentialStore {
    typealias Verification = BiometricSensor.Unlock

    let account: Account
    let device: DeviceRecord
    /// The id the next new passkey's first revision will have (decided before the ceremony, since
    /// the BS flag the authenticator signs depends on when that revision uploads).
    let nextRevisionId: [UInt8]
    private var view: DeviceView

    init(account: Account, device: DeviceRecord, nextRevisionId: [UInt8]) throws(VaultError) {
        self.account = account
        self.device = device
        self.nextRevisionId = nextRevisionId
        self.view = try account.view(of: device)
    }

    func credentials(forRP rpId: String) throws(AuthenticatorError) -> [Credential] {
        view.items.map(\.credential).filter { $0.rpId == rpId }
    }

    func privateKey(for credential: Credential, verification: Verification?) throws(AuthenticatorError) -> P256PrivateKey {
        do throws(VaultError) {
            let item = try item(credential)
            let der = try account.privateKey(of: item.winner, itemId: item.itemId,
                                             biometryKey: try biometryKey(for: credential, verification))
            do {
                return try der.withUnsafeBytes { buffer throws(OpenSSLFailure) in try P256PrivateKey.load(der: buffer) }
            } catch {
                throw VaultError(.corrupted, "the private key of credential \(Base64URL.encode(credential.id)) is not a P-256 key")
            }
        } catch { throw AuthenticatorError(error) }
    }

    func save(_ credential: Credential, privateKey: P256PrivateKey, replacing: [Credential],
              verification: Verification?) throws(AuthenticatorError) {
        do throws(VaultError) {
            let der = SecureBytes(count: privateKey.privateKeyDERCount)
            let length: Int
            do {
                length = try der.withUnsafeMutableBytes { buffer throws(OpenSSLFailure) in try privateKey.writePrivateKeyDER(into: buffer) }
            } catch {
                throw VaultError(.invalid, "OpenSSL could not encode the new private key: \(error)")
            }
            let id = nextRevisionId
            let uvKey = credential.requiresUserVerification ? try biometryKey(for: credential, verification) : nil
            let sealed = der.withUnsafeBytes { buffer in
                let secret = UnsafeRawBufferPointer(rebasing: buffer.prefix(length))
                return uvKey.map { account.vault.sealSecret(secret, recordId: id, biometryKey: $0, itemId: id) }
                    ?? account.vault.sealSecret(secret, recordId: id)
            }
            let time = account.eventTime
            let removals = try replacing.map { old throws(VaultError) in
                CredentialRecord.removal(id: account.newRevisionId(), of: old, itemId: try item(old).itemId, device: device, changedAt: time)
            }
            let record = CredentialRecord.make(id: id, itemId: id, for: credential, sealedKey: sealed, device: device, changedAt: time)
            try account.commitChange(removals + [record])
        } catch { throw AuthenticatorError(error) }
    }

    func updateSignCount(of credential: Credential, to count: UInt32) throws(AuthenticatorError) {
        do {
            let item = try item(credential)
            let id = account.newRevisionId()
            var state = item.credential
            state.signCount = count
            let sealed = try account.resealKey(of: item.winner, into: id)
            try account.commitChange([CredentialRecord.make(id: id, itemId: item.itemId, for: state, sealedKey: sealed,
                                                            device: device, changedAt: account.eventTime)])
            view = try account.view(of: device)
        } catch { throw AuthenticatorError(error) }
    }

    /// Deletes passkeys on this device: removal revisions, which sync like any change.
    func delete(_ credentials: [Credential]) throws(VaultError) {
        let time = account.eventTime
        var removals = [VaultRecord]()
        for credential in credentials {
            removals.append(CredentialRecord.removal(id: account.newRevisionId(), of: credential, itemId: try item(credential).itemId,
                                                     device: device, changedAt: time))
        }
        try account.commitChange(removals)
        view = try account.view(of: device)
    }

    /// The opened private key of `credential`, for `vault check` (no biometry key: only passkeys
    /// made without user verification).
    func privateKeyWithoutVerification(of credential: Credential) throws(VaultError) -> P256PrivateKey {
        let item = try item(credential)
        let der = try account.privateKey(of: item.winner, itemId: item.itemId, biometryKey: nil)
        do {
            return try der.withUnsafeBytes { buffer throws(OpenSSLFailure) in try P256PrivateKey.load(der: buffer) }
        } catch {
            throw VaultError(.corrupted, "the private key of credential \(Base64URL.encode(credential.id)) is not a P-256 key")
        }
    }

    var items: [DeviceView.Item] { view.items }

    private func item(_ credential: Credential) throws(VaultError) -> DeviceView.Item {
        guard let item = view.item(credentialId: credential.id) else {
            throw VaultError(.invalid, "credential \(Base64URL.encode(credential.id)) is not on this device")
        }
        return item
    }

    private func biometryKey(for credential: Credential, _ verification: Verification?) throws(VaultError) -> SecureBytes? {
        guard credential.requiresUserVerification else { return nil }
        guard let verification else {
            // The authenticator verifies before it asks for such a key; reaching here without the
            // proof is a caller's mistake, refused rather than worked around.
            throw VaultError(.invalid, "passkey \(Base64URL.encode(credential.id)) needs user verification to be used")
        }
        return verification.biometryKey
    }
}
