import KeyVault
import VirtualAuthenticator

/// One synced keychain account: the vault holding its devices (each with its own biometric PIN and
/// replica), and the account store the devices sync through — a directory by default, standing in
/// for the cloud, which holds only what the account key sealed. See docs/sync.md.
///
/// No daemon moves anything: each device's view is computed, whenever it is asked for, from when
/// each change was made and the delays then in force (SyncSchedule). Opening an account uploads
/// every change that has landed by now to the store, so the store always looks as the cloud would.
public final class Account {
    public let path: String
    let vault: Vault
    private(set) var settings: AccountSettings
    /// The account's time (milliseconds): the live clock, or a scenario's virtual one.
    public var clock: WallClock
    /// Credential ids and revision ids; a scenario's seeded source makes them repeat.
    public var random: RandomSource
    /// The Public Suffix List the client checks RP IDs against.
    public var suffixes: @Sendable () -> PublicSuffixList = { .system }
    /// The store and what it held when last read (revisions by id, object names), once it is in use.
    private var storeState: (store: any AccountStore, revisions: [Revision], landed: [[UInt8]: UInt64])?

    init(vault: Vault, clock: WallClock, random: RandomSource) throws(VaultError) {
        self.path = vault.path
        self.vault = vault
        self.clock = clock
        self.random = random
        self.settings = try AccountSettings.read(in: vault)
    }

    var now: UInt64 { clock.milliseconds() }

    /// The id of a new passkey revision, from the account's random source: a scenario's seeded one
    /// makes ids, and the delays drawn for them, repeat.
    func newRevisionId() -> [UInt8] { random.bytes(16) }
    /// The delay draws of a transfer that starts at `time`.
    func schedule(at time: UInt64) -> SyncSchedule { SyncSchedule(seed: settings.seed.value(at: time)?.value ?? 0) }

    /// The delays of `device` in force at `time`: its own, else the account's.
    func uploadDelay(of device: DeviceRecord, at time: UInt64) -> DelayRange {
        device.uploadDelay.value(at: time) ?? settings.uploadDelay.value(at: time) ?? .none
    }

    func downloadDelay(of device: DeviceRecord, at time: UInt64) -> DelayRange {
        device.downloadDelay.value(at: time) ?? settings.downloadDelay.value(at: time) ?? .none
    }

    // MARK: - Create and open

    /// Creates a vault at `path` with one account and its first device, `deviceName`; with
    /// `biometricPIN`, that device's simulated biometric is enrolled.
    public static func create(at path: String, passphrase: SecureBytes, kdf: KDFLevel = .interactive,
                              deviceName: String = Device.defaultDeviceName, biometricPIN: SecureBytes?,
                              maxPINAttempts: UInt32 = Device.defaultMaxPINAttempts,
                              waiting: Vault.Waiting = Vault.Waiting(),
                              clock: WallClock = .live, random: RandomSource = .live) throws(DeviceError) -> Account {
        guard passphrase.count > 0 else { throw DeviceError(.invalidArgument, "the vault passphrase is empty") }
        try checkDeviceName(deviceName)
        if let biometricPIN { try Device.checkNewPIN(biometricPIN) }
        guard (1...100).contains(maxPINAttempts) else {
            throw DeviceError(.invalidArgument, "the number of PIN attempts before lockout must be from 1 to 100")
        }
        do {
            // The settings record (the account and its first device) is part of creation: there is
            // never a vault without one.
            let vault = try Vault.create(at: path, passphrase: passphrase, kdf: kdf, waiting: waiting) { vault throws(VaultError) in
                let enrollment = try biometricPIN.map { pin throws(VaultError) in try vault.enrollBiometry(pin: pin).0 }
                var settings = DeviceRecord.newRecord(kind: .settings, name: deviceName, enrollment: enrollment,
                                                      maxAttempts: maxPINAttempts, syncedFrom: clock.milliseconds())
                AccountSettings.initialize(&settings, in: vault)
                return [settings]
            }
            return try Account(vault: vault, clock: clock, random: random)
        } catch { throw DeviceError(error) }
    }

    /// Opens the vault at `path`: `.write` for ceremonies and changes (writers take turns), `.read`
    /// to look. Changes that have landed by now are uploaded to the store.
    public static func open(at path: String, passphrase: SecureBytes, access: Vault.Access = .write,
                            waiting: Vault.Waiting = Vault.Waiting(),
                            clock: WallClock = .live, random: RandomSource = .live) throws(DeviceError) -> Account {
        do {
            let vault = try Vault.open(at: path, passphrase: passphrase, access: access, waiting: waiting)
            let account = try Account(vault: vault, clock: clock, random: random)
            try account.sync()
            return account
        } catch { throw DeviceError(error) }
    }

    // MARK: - Devices

    /// Every device, the first (the one the vault was created with) first.
    public var deviceNames: [String] { ((try? DeviceRecord.all(in: vault)) ?? []).map(\.name) }

    /// Device `name`, or the first device when `name` is `nil`.
    public func device(_ name: String? = nil) throws(DeviceError) -> Device {
        Device(account: self, record: try deviceRecord(named: name))
    }

    func deviceRecords() throws(DeviceError) -> [DeviceRecord] {
        do { return try DeviceRecord.all(in: vault) } catch { throw DeviceError(error) }
    }

    func deviceRecord(named name: String?) throws(DeviceError) -> DeviceRecord {
        let all = try deviceRecords()
        guard let name else { return all[0] }
        guard let found = all.first(where: { $0.name == name }) else {
            throw DeviceError(.noSuchDevice, "no device named '\(name)' in this account (it has: \(all.map(\.name).joined(separator: ", ")))")
        }
        return found
    }

    func deviceRecord(id: [UInt8]) throws(DeviceError) -> DeviceRecord {
        guard let found = try deviceRecords().first(where: { $0.id == id }) else {
            throw DeviceError(.noSuchDevice, "the device was removed")
        }
        return found
    }

    static func checkDeviceName(_ name: String) throws(DeviceError) {
        guard (1...64).contains(name.utf8.count),
              name.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0) }),
              !name.hasPrefix("-")
        else {
            throw DeviceError(.invalidArgument, "a device name is 1 to 64 letters, digits, '.', '_' or '-', not starting with '-'")
        }
    }

    /// Adds device `name`, its replica empty until sync brings the account's passkeys. With `pin`,
    /// its biometric is enrolled: when the account already has a biometric key (another device is
    /// enrolled), that device approves the new one — `approver` verifies on it (as an iPhone asks
    /// for another device's passcode to join the keychain) — so passkeys made with user
    /// verification work on the new device with its own PIN.
    @discardableResult
    public func addDevice(_ name: String, pin: SecureBytes?, maxPINAttempts: UInt32 = Device.defaultMaxPINAttempts,
                          approvedBy approverName: String? = nil, approver: UserPolicy = UserPolicy()) throws(DeviceError) -> Device {
        try Self.checkDeviceName(name)
        guard !deviceNames.contains(name) else { throw DeviceError(.invalidArgument, "the account already has a device named '\(name)'") }
        guard (1...100).contains(maxPINAttempts) else {
            throw DeviceError(.invalidArgument, "the number of PIN attempts before lockout must be from 1 to 100")
        }
        let enrollment = try pin.map { pin throws(DeviceError) in try newEnrollment(pin, for: name, approvedBy: approverName, approver: approver) }
        let record = DeviceRecord.newRecord(kind: .device, name: name, enrollment: enrollment, maxAttempts: maxPINAttempts,
                                            syncedFrom: now)
        do {
            try vault.commit([record])
            try sync()
        } catch { throw DeviceError(error) }
        return try device(name)
    }

    /// A new enrollment of `pin` for device `name`: a wrap of the account's biometry key (unlocked
    /// on an enrolled device, which approves), or of a new key when no device is enrolled.
    func newEnrollment(_ pin: SecureBytes, for name: String, approvedBy approverName: String?,
                       approver: UserPolicy) throws(DeviceError) -> BiometryEnrollment {
        try Device.checkNewPIN(pin)
        let enrolled = try deviceRecords().filter { $0.enrollment != nil && $0.name != name }
        var unlock: BiometricSensor.Unlock? = nil
        if !enrolled.isEmpty {
            let approving = try approverName.map { n throws(DeviceError) in try deviceRecord(named: n) } ?? enrolled[0]
            guard approving.enrollment != nil else {
                throw DeviceError(.invalidArgument, "device '\(approving.name)' has no biometric PIN to approve '\(name)' with")
            }
            let prompt = UserPrompt(ceremony: .registration, rpId: "approve device \(name) on \(approving.name)", userName: nil)
            do {
                unlock = try SimulatedUser(sensor: BiometricSensor(account: self, deviceId: approving.id), policy: approver).verifyUser(prompt)
            } catch { throw DeviceError(error) }
        }
        do { return try vault.enrollBiometry(pin: pin, keeping: unlock?.biometryKey).0 } catch { throw DeviceError(error) }
    }

    /// Removes device `name` (not the first): what it uploaded stays in the store; what it had not
    /// yet uploaded is lost with it.
    public func removeDevice(_ name: String) throws(DeviceError) {
        let record = try deviceRecord(named: name)
        guard record.record.kind == .device else {
            throw DeviceError(.invalidArgument, "'\(name)' is the account's first device, which holds the account; it cannot be removed")
        }
        do throws(VaultError) {
            try sync()
            let gone = try localRevisions().filter { $0.originId == record.id }.map(tombstone)
            try vault.commit(gone + [VaultRecord(id: record.id, kind: .tombstone, version: record.record.version + 1)])
        } catch { throw DeviceError(error) }
    }

    /// A factory reset of device `name`: its replica and its biometric enrollment are gone, and
    /// with them every change it had not uploaded; the account's passkeys come back as sync
    /// delivers them, from now.
    public func resetDevice(_ name: String) throws(DeviceError) {
        let record = try deviceRecord(named: name)
        do throws(VaultError) {
            try useStore()
            try sync()
            let wiped = try localRevisions().filter { $0.originId == record.id }.map(tombstone)
            try DeviceRecord.update(record.id, in: vault, with: wiped) { r throws(VaultError) in
                // The enrollment is retired, not destroyed: the former PIN can recover the
                // account's key, as iCloud Keychain asks for the old iPhone's passcode.
                if let current = record.enrollment { DeviceRecord.setFormerEnrollment(current, in: &r) }
                DeviceRecord.setEnrollment(nil, in: &r)
                r.setInteger(DeviceRecord.Tag.failures, UInt32(0))
                r.setInteger(DeviceRecord.Tag.syncedFrom, now)
            }
        } catch { throw DeviceError(error) }
    }

    /// Takes device `name` offline (nothing uploads or downloads) or back online (what waited
    /// starts then).
    public func setOnline(_ online: Bool, device name: String) throws(DeviceError) {
        let record = try deviceRecord(named: name)
        guard record.isOnline != online else { return }
        var intervals = record.offline
        if online, let open = intervals.popLast() {
            intervals.append(OfflineInterval(from: open.from, to: max(now, open.from)))
        } else {
            intervals.append(OfflineInterval(from: now, to: nil))
        }
        do {
            try sync()
            try DeviceRecord.update(record.id, in: vault) { r throws(VaultError) in DeviceRecord.setOffline(intervals, in: &r) }
        } catch { throw DeviceError(error) }
    }

    // MARK: - Sync settings

    /// Sets the account's delays, or one device's when `device` is named (`nil` ranges are left as
    /// they are), from now on: what is in flight keeps the delay it started with.
    public func setDelays(upload: DelayRange?, download: DelayRange?, device name: String? = nil) throws(DeviceError) {
        let target = name == nil ? try deviceRecords()[0] : try deviceRecord(named: name)
        do {
            try sync()
            try useStore()
            let time = now
            try DeviceRecord.update(target.id, in: vault) { r throws(VaultError) in
                let device = try DeviceRecord(r)
                let (up, down) = name == nil
                    ? (AccountSettings.Tag.uploadDelay, AccountSettings.Tag.downloadDelay)
                    : (DeviceRecord.Tag.uploadDelay, DeviceRecord.Tag.downloadDelay)
                var (ups, downs) = name == nil ? (settings.uploadDelay, settings.downloadDelay) : (device.uploadDelay, device.downloadDelay)
                if let upload { ups.set(upload, from: time) }
                if let download { downs.set(download, from: time) }
                DeviceRecord.setHistory(ups, up, in: &r)
                DeviceRecord.setHistory(downs, down, in: &r)
            }
            settings = try AccountSettings.read(in: vault)
        } catch { throw DeviceError(error) }
    }

    /// The seed delays in a range are drawn with (from now on: what is in flight keeps its draw),
    /// and whether BS is reported from a passkey's creation (`immediate`, as Apple does) rather
    /// than once its first upload landed.
    public func setSyncOptions(seed: UInt64? = nil, backupStateImmediate: Bool? = nil) throws(DeviceError) {
        let first = try deviceRecords()[0].id
        do {
            try sync()
            let time = now
            try DeviceRecord.update(first, in: vault) { r throws(VaultError) in
                if let seed {
                    var seeds = settings.seed
                    seeds.set(Seed(seed), from: time)
                    DeviceRecord.setHistory(seeds, AccountSettings.Tag.seed, in: &r)
                }
                if let backupStateImmediate { r.setField(AccountSettings.Tag.backupStateImmediate, [backupStateImmediate ? 1 : 0]) }
            }
            settings = try AccountSettings.read(in: vault)
        } catch { throw DeviceError(error) }
    }

    public var seed: UInt64 { settings.seed.current?.value ?? 0 }
    public var backupStateImmediate: Bool { settings.backupStateImmediate }

    // MARK: - Revisions, the store, views

    /// Every revision in this vault, of every device, in the vault's order.
    func localRevisions() throws(VaultError) -> [Revision] {
        let first = try DeviceRecord.all(in: vault)[0]
        var out = [Revision]()
        for (index, record) in vault.records(kind: .credential).enumerated() {
            out.append(try Revision(record, source: .local(record), sequence: index, firstDevice: first))
        }
        return out
    }

    func tombstone(_ revision: Revision) -> VaultRecord {
        guard case .local(let record) = revision.source else { preconditionFailure("only a local revision is tombstoned") }
        return VaultRecord(id: record.id, kind: .tombstone, version: record.version + 1)
    }

    /// Where the account store is: the path the account's settings name (tag 26), else `<vault>/cloud`.
    var storePath: String { settings.storePath ?? path + "/cloud" }

    /// Whether devices sync through the store yet: once there is a second device, a reset, or a
    /// sync setting. A lone device never writes one (its changes are uploaded when one appears).
    var storeInUse: Bool {
        storeState != nil || ((try? deviceRecords().count) ?? 1) > 1 || DirectoryStore.exists(at: storePath)
    }

    /// The revisions the store held when last read.
    var storeRevisions: [Revision] { storeState?.revisions ?? [] }

    /// Opens (creating) the store and reads every revision in it.
    func useStore() throws(VaultError) {
        guard storeState == nil else { return }
        let store = try DirectoryStore(path: storePath)
        storeState = (store, [], [:])
        try readStore()
    }

    private func readStore() throws(VaultError) {
        guard let state = storeState else { return }
        let first = try DeviceRecord.all(in: vault)[0]
        var revisions = [Revision](), landed = [[UInt8]: UInt64]()
        for name in try state.store.names() {
            guard let nameBytes = Hex.bytes(name),
                  let entries = StorePack.open(try state.store.object(name), name: nameBytes, key: settings.accountKey,
                                               accountId: settings.accountId)
            else { continue }  // not this account's, or damaged: the store is not trusted
            for entry in entries where landed[entry.record.id] == nil {
                guard let revision = try? Revision(entry.record, source: .store(landedAt: entry.landedAt), firstDevice: first) else { continue }
                revisions.append(revision)
                landed[revision.id] = entry.landedAt
            }
        }
        storeState = (state.store, revisions, landed)
    }

    /// When a revision reached (or will reach) the store; `nil` while its device is offline. A
    /// revision made before its device's last reset never uploads (it was lost with the replica).
    func landedAt(_ revision: Revision, devices: [DeviceRecord]) -> UInt64? {
        if let landed = revision.storeLandedAt ?? storeState?.landed[revision.id] { return landed }
        guard let origin = devices.first(where: { $0.id == revision.originId }) else { return nil }
        return landing(of: revision.id, from: origin, changedAt: revision.changedAt)
    }

    /// When revision `id`, made by `origin` at `changedAt`, lands in the store.
    func landing(of id: [UInt8], from origin: DeviceRecord, changedAt: UInt64) -> UInt64? {
        guard changedAt >= origin.syncedFrom, let start = SyncSchedule.firstOnline(after: changedAt, offline: origin.offline) else {
            return nil
        }
        return start + schedule(at: start).delay(uploadDelay(of: origin, at: start), .upload, device: origin.name, revision: id)
    }

    /// When a store revision reaches `device`; `nil` while it is offline.
    func arrival(of revision: Revision, at device: DeviceRecord, landed: UInt64) -> UInt64? {
        guard let start = SyncSchedule.firstOnline(after: max(landed, device.syncedFrom), offline: device.offline) else { return nil }
        return start + schedule(at: start).delay(downloadDelay(of: device, at: start), .download, device: device.name,
                                                 revision: revision.id)
    }

    /// Uploads every local revision that has landed by now and is not in the store, in one object;
    /// then (a writer) drops revisions a later one of the same device replaced, once they have
    /// landed and so no longer need uploading.
    func sync() throws(VaultError) {
        let devices = try DeviceRecord.all(in: vault)
        let local = try localRevisions()
        let time = now
        if storeInUse {
            try useStore()
            let landed = local.compactMap { r in landedAt(r, devices: devices).flatMap { $0 <= time ? (r, $0) : nil } }
                .filter { storeState!.landed[$0.0.id] == nil }
            for chunk in stride(from: 0, to: landed.count, by: 4096).map({ Array(landed[$0..<min($0 + 4096, landed.count)]) }) {
                try upload(chunk)
            }
            if !landed.isEmpty { try readStore() }
        }
        guard vault.access == .write else { return }
        var superseded = [VaultRecord]()
        for (_, revisions) in Dictionary(grouping: local, by: { $0.originId + $0.itemId }) where revisions.count > 1 {
            let latest = revisions.max(by: Revision.precedes)!
            for r in revisions where r.id != latest.id {
                guard let landed = landedAt(r, devices: devices), landed <= time else { continue }
                if storeInUse && storeState?.landed[r.id] == nil { continue }
                superseded.append(tombstone(r))
            }
        }
        if !superseded.isEmpty { try vault.commit(superseded) }
    }

    /// Tombstones for `device`'s revisions of `items` that a new revision by the same device is
    /// about to replace, and that have nothing left to do: landed by now (and, when devices sync,
    /// uploaded). Committed with the new revision, so a change costs one frame.
    func replaced(items: [[UInt8]], by device: DeviceRecord) throws(VaultError) -> [VaultRecord] {
        let devices = try DeviceRecord.all(in: vault)
        let time = now
        return try localRevisions().filter { r in
            guard r.originId == device.id, items.contains(r.itemId),
                  let landed = landedAt(r, devices: devices), landed <= time else { return false }
            return !storeInUse || storeState?.landed[r.id] != nil
        }.map(tombstone)
    }

    private func upload(_ revisions: [(Revision, UInt64)]) throws(VaultError) {
        guard let state = storeState else { return }
        var entries = [(record: VaultRecord, landedAt: UInt64)]()
        for (revision, landed) in revisions {
            guard case .local(var record) = revision.source else { continue }
            if let sealed = revision.sealedKey {
                let secret = try vault.openSecret(sealed, recordId: record.id)
                record.setField(CredentialRecord.Tag.sealedPrivateKey, settings.accountKey.sealSecret(
                    secret, associatedData: StorePack.itemAssociatedData(accountId: settings.accountId, revisionId: record.id)))
            }
            entries.append((record, landed))
        }
        let name = random.bytes(16)
        try state.store.put(Hex.string(name), StorePack.seal(entries, name: name, key: settings.accountKey, accountId: settings.accountId))
    }

    /// What `device` holds now.
    func view(of device: DeviceRecord) throws(VaultError) -> DeviceView {
        try sync()
        let devices = try DeviceRecord.all(in: vault)
        let time = now
        let own = try localRevisions().filter { $0.originId == device.id }
        var arrivals = [(Revision, UInt64?)]()
        for revision in storeState?.revisions ?? [] {
            if revision.originId == device.id && revision.changedAt >= device.syncedFrom {
                arrivals.append((revision, revision.changedAt))  // its own change since its last reset
            } else {
                arrivals.append((revision, arrival(of: revision, at: device, landed: revision.storeLandedAt ?? 0)))
            }
        }
        return DeviceView(own: own, arrivals: arrivals, at: time, landedAt: { self.landedAt($0, devices: devices) },
                          backupStateImmediate: settings.backupStateImmediate)
    }

    /// A passkey revision's private key, opened for one signature: from this vault or from the
    /// store, through the biometry key when it was made with user verification.
    func privateKey(of revision: Revision, itemId: [UInt8], biometryKey: SecureBytes?) throws(VaultError) -> SecureBytes {
        guard let sealed = revision.sealedKey else { throw VaultError(.corrupted, "a passkey revision has no private key") }
        switch revision.source {
        case .local:
            guard let biometryKey else { return try vault.openSecret(sealed, recordId: revision.id) }
            return try vault.openSecret(sealed, recordId: revision.id, biometryKey: biometryKey, itemId: itemId)
        case .store:
            guard let outer = settings.accountKey.openSecret(
                sealed, associatedData: StorePack.itemAssociatedData(accountId: settings.accountId, revisionId: revision.id))
            else { throw VaultError(.corrupted, "a passkey from the account store failed authentication") }
            guard let biometryKey else { return outer }
            return try vault.openBiometrySealed(outer, itemId: itemId, biometryKey: biometryKey)
        }
    }

    /// `revision`'s private key sealed again for a new revision `newId` of this vault (its inner,
    /// biometry-key seal, if any, untouched).
    func resealKey(of revision: Revision, into newId: [UInt8]) throws(VaultError) -> [UInt8] {
        guard let sealed = revision.sealedKey else { throw VaultError(.corrupted, "a passkey revision has no private key") }
        switch revision.source {
        case .local: return try vault.resealSecret(sealed, from: revision.id, to: newId)
        case .store:
            guard let outer = settings.accountKey.openSecret(
                sealed, associatedData: StorePack.itemAssociatedData(accountId: settings.accountId, revisionId: revision.id))
            else { throw VaultError(.corrupted, "a passkey from the account store failed authentication") }
            return outer.withUnsafeBytes { vault.sealSecret($0, recordId: newId) }
        }
    }

    // MARK: - The vault itself

    public var facts: Vault.Facts { vault.facts }

    public func compact() throws(DeviceError) {
        do { try vault.compact() } catch { throw DeviceError(error) }
    }

    /// A new passphrase (and KDF level, when given) and a new vault key: every record is written
    /// again under the new key, so an old copy of the header with the old passphrase opens nothing.
    public func changePassphrase(to passphrase: SecureBytes, kdf: KDFLevel? = nil) throws(DeviceError) {
        guard passphrase.count > 0 else { throw DeviceError(.invalidArgument, "the new passphrase is empty") }
        do {
            try vault.changePassphrase(to: passphrase, kdf: kdf, sealedFields: [
                .credential: [CredentialRecord.Tag.sealedPrivateKey], .settings: [AccountSettings.Tag.accountKey],
            ])
            settings = try AccountSettings.read(in: vault)
        } catch { throw DeviceError(error) }
    }
}
