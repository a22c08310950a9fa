#if canImport(Glibc)
import Glibc
#endif
import KeyVault
import SyncStore
import VirtualAuthenticator

extension Account {
    /// Adds device `name` in a vault of its own at `path` (a new vault, with `passphrase`) that
    /// syncs with this one through this account's store only: the new vault holds the account's
    /// key and id, sealed under its own vault key, the store's path, and the account's sync
    /// settings as they are now; its first device is `name`. It learns this account's passkeys
    /// from the store alone, as a device on another machine would. With `pin`, its biometric is
    /// enrolled with the account's biometry key, approved on an enrolled device here (as
    /// ``addDevice(_:pin:maxPINAttempts:approvedBy:approver:profile:aaguid:)`` is).
    ///
    /// Every vault lists the new device from the store's directory (docs/sync.md, "Devices in
    /// several vaults"); its name is refused if a device of any vault of the account has it.
    @discardableResult
    public func addDevice(_ name: String, inNewVaultAt path: String, passphrase: SecureBytes, kdf: KDFLevel = .interactive,
                          pin: SecureBytes?, maxPINAttempts: UInt32 = Device.defaultMaxPINAttempts,
                          approvedBy approverName: String? = nil, approver: UserPolicy = UserPolicy()) throws(DeviceError) -> Account {
        try Self.checkDeviceName(name)
        try requireFreeName(name)
        guard passphrase.count > 0 else { throw DeviceError(.invalidArgument, "the new vault's passphrase is empty") }
        guard (1...100).contains(maxPINAttempts) else {
            throw DeviceError(.invalidArgument, "the number of PIN attempts before lockout must be from 1 to 100")
        }
        guard vault.access == .write else { throw DeviceError(.invalidArgument, "adding a device needs the vault opened for writing") }
        // The account's biometry key, unlocked on an enrolled device of this vault.
        var biometryKey: SecureBytes?
        if let pin {
            try Device.checkNewPIN(pin)
            biometryKey = try approvingBiometryKey(for: name, approvedBy: approverName, approver: approver)
        }
        // The store must exist, and hold what has landed here, before the new vault reads it.
        do {
            useStore()
            try sync()
        } catch { throw DeviceError(error) }
        guard storeLink.state != nil else {
            throw DeviceError(.storage, storeProblem ?? "the account store at \(storeName) cannot be used")
        }
        // The account's settings as they are now, for every vault to take up (the new one with them).
        do {
            let mine = PublishedSettings(settings, at: present)
            try publishSettings { $0 = mine }
        } catch { throw DeviceError(error) }
        let store = storeOnServer ? storePath : Self.absolutePath(storePath)
        let first = try deviceRecords()[0].record
        // The sync settings as they are now; later changes travel through the store.
        let syncFields = [AccountSettings.Tag.seed, AccountSettings.Tag.backupStateImmediate, AccountSettings.Tag.uploadDelay,
                          AccountSettings.Tag.downloadDelay].map { ($0, first.field($0).map(Array.init)) }
        return try Self.createMember(at: path, passphrase: passphrase, kdf: kdf, name: name, pin: pin, biometryKey: biometryKey,
                                     maxPINAttempts: maxPINAttempts, accountKey: settings.accountKey, accountId: settings.accountId,
                                     storePath: store, syncFields: syncFields, clock: clock, random: random)
    }

    /// `path` from the root, so a vault elsewhere finds the same store.
    static func absolutePath(_ path: String) -> String {
        guard !path.hasPrefix("/") else { return path }
        guard let cwd = getcwd(nil, 0) else { return path }
        defer { free(cwd) }
        return String(cString: cwd) + "/" + path
    }

    /// Forgets what this vault knows of the store — its cursor, queue and replica records, all but
    /// the passkeys it collected — and
    /// reads the store again from the start, uploading what it lacks: what this vault's devices
    /// hold of other vaults' devices then comes from the store alone.
    public func forgetStore() throws(DeviceError) {
        do throws(VaultError) {
            let replicas = try vault.records(kind: .credential).filter { StoreReplica.revisionRecord($0) != nil }
            var gone = replicas.map { VaultRecord(id: $0.id, kind: .tombstone, version: $0.version + 1) }
            // The passkeys collected stay remembered: a revision of one must not bring it back.
            if let saved = try storeLink.savedSyncState(in: vault) {
                var fresh = SyncState()
                fresh.version = saved.version
                fresh.collected = saved.collected
                // What it read and made of the chains stays: the store read again is checked
                // against it, and this vault's uploads are numbered on (StoreChain.swift).
                fresh.chains = saved.chains
                fresh.ownHead = saved.ownHead
                fresh.repairAnswered = saved.repairAnswered
                fresh.problems = saved.problems
                fresh.snapshotsListed = saved.snapshotsListed
                gone.append(fresh.record())
            }
            if !gone.isEmpty { try vault.commit(gone) }
            storeLink.forget()
            readModel.forgetRevisions()
            try sync()
        } catch { throw DeviceError(error) }
    }
}
