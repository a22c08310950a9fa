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
    /// The id the next new passkey's first revision will have, when a registration decided it
    /// before the ceremony (the BS flag the authenticator signs depends on when that revision
    /// uploads); `nil`: drawn when written. Only writes draw from the account's random source, so
    /// a step that only looks leaves a seeded scenario's later ids and delays as they were.
    let nextRevisionId: [UInt8]?
    /// What the device holds of each RP asked about (a ceremony asks about one) — or, on an RP
    /// the vault splits by user, of each user asked about (``Account/scope(_:user:)``) — and of
    /// all of them once asked; forgotten after each change this store makes.
    private var views = [HistoryScope: DeviceView]()
    private var everything: DeviceView?
    /// The lists handed out newest first: one whose whole view could not be made (read where
    /// nothing can throw) fails the store's next step with why.
    private var newestFirstLists = [NewestFirst]()

    /// A request begins: the store is read once for it, and only read (``Account/readStoreForRequest()``).
    init(account: Account, device: DeviceRecord, nextRevisionId: [UInt8]?) {
        self.account = account
        self.device = device
        self.nextRevisionId = nextRevisionId
        account.readStoreForRequest()
    }

    private func view(rpId: String) throws(VaultError) -> DeviceView { try view(.whole(rpId)) }

    /// What the device holds of user `user`'s passkeys of `rpId`: a view of the RP, or of that
    /// user's passkeys alone.
    private func view(rpId: String, user: [UInt8]) throws(VaultError) -> DeviceView {
        try view(account.scope(rpId, user: user))
    }

    private func view(_ scope: HistoryScope) throws(VaultError) -> DeviceView {
        if let view = views[scope] { return view }
        let view = try account.view(of: device, scope: scope)
        views[scope] = view
        return view
    }

    /// The passkeys with credential id `id` that the device holds, of RP `rpId` or of any,
    /// oldest first: found through the vault's credential-id lookup, each in the view of its
    /// RP — or, on a split RP, of its user.
    func items(credentialId id: [UInt8], rpId: String? = nil) throws(VaultError) -> [DeviceView.Item] {
        var out = [DeviceView.Item]()
        var seen = Set<[UInt8]>()
        for owner in try account.owners(ofCredential: id) where rpId.map({ $0 == owner.rpId }) ?? true {
            let view = try view(account.scope(owner.rpId, user: owner.user))
            for item in view.items(credentialIds: [id]) where seen.insert(item.itemId).inserted { out.append(item) }
        }
        return out.sorted(by: DeviceView.creationOrder)
    }

    private func changed() {
        views = [:]
        everything = nil
    }

    func credentials(forRP rpId: String) throws(AuthenticatorError) -> [Credential] {
        // Hidden passkeys too: the authenticator leaves them out of discovery, but an RP's
        // excludeCredentials still finds them, and a new passkey of their user replaces them.
        do { return try view(rpId: rpId).items.map(\.credential) } catch { throw AuthenticatorError(error) }
    }

    /// The same passkeys, hidden ones too, read from the view where they are — or, the first time
    /// this process asks for an RP it keeps no whole view of, newest first (``NewestFirst``): a
    /// discoverable sign-in's default account without the whole view, which an RP of a hundred
    /// thousand passkeys takes seconds to build. A process that asks again for the RP (a server,
    /// a scenario) builds its whole view then, and keeps it in step from there on.
    func credentialList(forRP rpId: String) throws(AuthenticatorError) -> ViewCredentialList {
        do throws(VaultError) {
            if views[.whole(rpId)] == nil, try account.readsByUser(rpId), account.readNewestFirst.insert(rpId).inserted {
                let list = try NewestFirst(account: account, device: device, rpId: rpId)
                newestFirstLists.append(list)
                return ViewCredentialList(newestFirst: list)
            }
            return ViewCredentialList(view: try view(rpId: rpId))
        } catch {
            throw AuthenticatorError(error)
        }
    }

    func credentials(forRP rpId: String, ids: [[UInt8]]) throws(AuthenticatorError) -> [Credential] {
        guard !ids.isEmpty else { return [] }
        let wanted = Set(ids)
        do throws(VaultError) {
            guard try account.readsByUser(rpId) else { return try view(rpId: rpId).items(credentialIds: wanted).map(\.credential) }
            // A split RP: each listed passkey in its user's view.
            var items = [DeviceView.Item]()
            for id in wanted { items += try self.items(credentialId: id, rpId: rpId) }
            return items.sorted(by: DeviceView.creationOrder).map(\.credential)
        } catch {
            throw AuthenticatorError(error)
        }
    }

    func credentials(forRP rpId: String, userHandle: [UInt8]) throws(AuthenticatorError) -> [Credential] {
        do { return try view(rpId: rpId, user: userHandle).items(userHandle: userHandle).map(\.credential) } catch {
            throw AuthenticatorError(error)
        }
    }

    /// Every passkey the device holds, oldest first.
    func allItems() throws(VaultError) -> [DeviceView.Item] {
        if let everything { return everything.items }
        let view = try account.view(of: device)
        everything = view
        return view.items
    }

    /// The passkeys of `rpIds` the device holds, oldest first. Of one RP this process keeps no
    /// whole view of, the first time it asks (`list --rp-id`), worked out passkey by passkey
    /// (``NewestFirst/all()``) rather than through the history and view a process that keeps
    /// asking keeps in step — and then keeps.
    func items(rpIds: Set<String>) throws(VaultError) -> [DeviceView.Item] {
        if rpIds.count == 1, let rpId = rpIds.first, views[.whole(rpId)] == nil, try account.readsByUser(rpId),
           account.readNewestFirst.insert(rpId).inserted {
            return try NewestFirst(account: account, device: device, rpId: rpId).all()
        }
        return try account.view(of: device, rpIds: rpIds).items
    }

    func privateKey(for credential: Credential, verification: Verification?) throws(AuthenticatorError) -> PrivateKey {
        do throws(VaultError) {
            let item = try item(credential)
            // A passkey made with user verification: its key only with this ceremony's proof.
            guard try biometryKey(for: credential, verification) != nil, let verification else {
                return try account.signingKey(of: item.winner, itemId: item.itemId)
            }
            return try account.signingKey(of: item.winner, itemId: item.itemId, verifiedBy: verification)
        } catch { throw AuthenticatorError(error) }
    }

    func save(_ credential: Credential, privateKey: PrivateKey, replacing: [Credential],
              verification: Verification?) throws(AuthenticatorError) {
        do throws(VaultError) {
            let der = SecureBytes(count: privateKey.privateKeyDERCount)
            let length: Int
            do {
                length = try der.withUnsafeMutableBytes { buffer throws(OpenSSLFailure) in try privateKey.writePrivateKeyDER(into: buffer) }
            } catch {
                throw VaultError(.inconsistent, "OpenSSL could not encode the new private key: \(error)")  // a key it just made
            }
            let id = account.newRevisionId()  // the registration's reserved id, when it reserved one
            guard nextRevisionId == nil || id == nextRevisionId! else {
                throw VaultError(.inconsistent, "the new passkey's revision id is not the one its registration reserved")
            }
            let uvKey = credential.requiresUserVerification ? try biometryKey(for: credential, verification) : nil
            let sealed = der.withUnsafeBytes { buffer in
                let secret = UnsafeRawBufferPointer(rebasing: buffer.prefix(length))
                return uvKey.map { account.vault.sealSecret(secret, recordId: id, biometryKey: $0, itemId: id) }
                    ?? account.vault.sealSecret(secret, recordId: id)
            }
            let time = account.eventTime
            let replaced = try replacing.map { old throws(VaultError) in try item(old) }
            let removals = zip(replacing, replaced).map { old, item in
                CredentialRecord.removal(id: account.newRevisionId(), of: old, itemId: item.itemId, device: device, changedAt: time)
            }
            // A registration's passkey is made now, even when its ceremony began in an earlier second
            // (its `createdAt`): created at the commit's instant, it lists after every passkey before it.
            let record = CredentialRecord.make(id: id, itemId: id, for: credential, sealedKey: sealed, device: device, changedAt: time,
                                               created: time)
            try account.commitChange(removals + [record])
            for item in replaced { account.readModel.keyring.forget(revision: item.winner.id) }
            // Kept loaded for the sign-ins that follow, named as they look it up: behind this
            // ceremony's proof when sealed under the biometry key.
            account.keepSigningKey(privateKey, ofNewRevision: id, verifiedBy: uvKey == nil ? nil : verification)
            changed()
        } catch { throw AuthenticatorError(error) }
    }

    func updateSignCount(of credential: Credential, to count: UInt32) throws(AuthenticatorError) {
        do throws(VaultError) {
            // The global counter moves in the same write as the passkey's revision.
            var also = [VaultRecord]()
            if credential.globalCounter {
                guard var record = try account.vault.record(id: device.id) else { throw VaultError(.invalid, "the device's record is gone") }
                record.version += 1
                record.setInteger(DeviceRecord.Tag.globalSignCount, count)
                also.append(record)
            }
            try revise(credential, alsoCommitting: also) { $0.signCount = count }
        } catch { throw AuthenticatorError(error) }
    }

    /// A large blob write is a change like a new count: a new revision carrying the sealed blob
    /// (tag 24), which syncs to the account's other devices.
    func storeLargeBlob(_ sealedBlob: [UInt8], of credential: Credential) throws(AuthenticatorError) {
        do { try revise(credential) { $0.largeBlob = sealedBlob } } catch { throw AuthenticatorError(error) }
    }

    func globalSignCount() throws(AuthenticatorError) -> UInt32 {
        do throws(VaultError) {
            guard let record = try account.vault.record(id: device.id) else { return device.globalSignCount }
            return try DeviceRecord(record).globalSignCount
        } catch { throw AuthenticatorError(error) }
    }

    /// Writes a new revision of `credential` as `change` leaves it (it syncs like any change) and
    /// returns the passkey as it is now.
    @discardableResult
    func revise(_ credential: Credential, alsoCommitting also: [VaultRecord] = [],
                _ change: (inout Credential) -> Void) throws(VaultError) -> Credential {
        let item = try item(credential)
        // A deletion made elsewhere that has not reached this device: the change is written (the
        // device cannot know), but it will never win over the deletion.
        let deletion = try account.rpHistory(account.scope(item.credential.rpId, user: item.credential.userHandle)).byItem[item.itemId]?
            .filter(\.removed).min { $0.changedAt < $1.changedAt }
        let id = account.newRevisionId()
        var state = item.credential
        change(&state)
        let sealed = try account.resealKey(of: item.winner, into: id)
        let time = account.eventTime
        // A key sealed under the biometry key in another vault stays bound to that vault's id.
        let record = CredentialRecord.make(id: id, itemId: item.itemId, for: state, sealedKey: sealed, device: device, changedAt: time,
                                           created: item.winner.created, sealedInVault: item.winner.sealedInVault)
        try account.commitChange(also + [record])
        account.readModel.keyring.move(revision: item.winner.id, to: id)  // the same key, sealed for the new revision
        if let deletion {
            account.storeLink.noteDropped(DroppedRevision(time: time.ms, device: device.name, credentialId: state.id, revisionId: id,
                                                            deletedBy: deletion.originName, deletedAt: deletion.changedAt.ms))
        }
        changed()
        return state
    }

    /// Deletes passkeys on this device: removal revisions, which sync like any change.
    func delete(_ credentials: [Credential]) throws(VaultError) {
        let time = account.eventTime
        var removals = [VaultRecord](), winners = [[UInt8]]()
        for credential in credentials {
            let item = try item(credential)
            removals.append(CredentialRecord.removal(id: account.newRevisionId(), of: credential, itemId: item.itemId,
                                                     device: device, changedAt: time))
            winners.append(item.winner.id)
        }
        try account.commitChange(removals)
        for id in winners { account.readModel.keyring.forget(revision: id) }
        changed()
    }

    /// The opened private key of `credential`, for `vault check` (no biometry key: only passkeys
    /// made without user verification).
    func privateKeyWithoutVerification(of credential: Credential) throws(VaultError) -> PrivateKey {
        let item = try item(credential)
        let der = try account.privateKey(of: item.winner, itemId: item.itemId, biometryKey: nil)
        do {
            return try der.withUnsafeBytes { buffer throws(OpenSSLFailure) in try PrivateKey.load(der: buffer) }
        } catch {
            throw VaultError(.corrupted, "the private key of credential \(Base64URL.encode(credential.id)) is not a P-256 key")
        }
    }

    private func item(_ credential: Credential) throws(VaultError) -> DeviceView.Item {
        if let failure = newestFirstLists.lazy.compactMap(\.failure).first { throw failure }
        guard let item = try view(rpId: credential.rpId, user: credential.userHandle).item(credentialId: credential.id) else {
            throw VaultError(.invalid, "credential \(Base64URL.encode(credential.id)) is not on this device")
        }
        return item
    }

    private func biometryKey(for credential: Credential, _ verification: Verification?) throws(VaultError) -> SecureBytes? {
        guard credential.requiresUserVerification else { return nil }
        guard let verification else {
            // The authenticator verifies before it asks for such a key; reaching here without the
            // proof is a bug of this program (no request can cause it), refused rather than worked around.
            throw VaultError(.inconsistent, "passkey \(Base64URL.encode(credential.id)) needs user verification to be used")
        }
        return verification.biometryKey
    }
}
