import KeyVault
import VirtualAuthenticator

extension Device {
    /// Whether `credential` is one this device holds as a security key: its own device-bound
    /// credentials, and — only when its model's credentials sync — the account's synced passkeys
    /// too. A key of a device-bound model (security-key) keeps out of sight the passkeys the
    /// account's phones sync to it, as a USB key holds nothing of a phone's keychain.
    func keyHolds(_ credential: Credential, profile: AuthenticatorProfile) -> Bool {
        profile.backupEligible || !credential.backupEligible
    }

    /// The credentials this device holds as a security key, oldest first (`rpId`'s only, when
    /// given): its discoverable ones (what credential management lists and a key has slots for),
    /// or, with `discoverableOnly` false, those an allow list reaches too.
    public func keyCredentials(rpId: String? = nil, discoverableOnly: Bool = true) throws(DeviceError) -> [Credential] {
        let (profile, _) = try account.profile(of: try record())
        return try credentials(rpId: rpId).filter { keyHolds($0, profile: profile) && ($0.discoverable || !discoverableOnly) }
    }

    /// authenticatorReset (CTAP 2.1 §6.6): every credential the key holds is deleted and its PIN
    /// is gone, with its retries, and its settings and large-blob array (``KeySettings``) are back
    /// to their defaults, in one frame. The account's synced passkeys a device-bound key
    /// keeps out of sight are not its to delete, and stay.
    public func keyReset() throws(DeviceError) {
        let held = try keyCredentials(discoverableOnly: false)
        let store = try store()
        let time = account.eventTime
        let record = try record()
        account.forgetCheckedPIN(of: id, everyKey: true)  // the PIN goes with the reset: forget what its last right check established
        var removals = [VaultRecord]()
        do throws(VaultError) {
            for credential in held {
                guard let item = try store.items(credentialId: credential.id).first(where: { $0.credential.id == credential.id }) else { continue }
                removals.append(CredentialRecord.removal(id: account.newRevisionId(), of: credential, itemId: item.itemId,
                                                         device: record, changedAt: time))
            }
            if let state = try KeyStateRecord.removal(of: id, in: account.vault) { removals.append(state) }
            try DeviceRecord.update(id, in: account.vault, with: removals) { r throws(VaultError) in
                DeviceRecord.setEnrollment(nil, in: &r)
                DeviceRecord.setFormerEnrollment(nil, in: &r)
                r.setInteger(DeviceRecord.Tag.failures, UInt32(0))
            }
            try account.sync()
        } catch { throw DeviceError(error) }
    }
}
