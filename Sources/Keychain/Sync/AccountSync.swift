import KeyVault
import VirtualAuthenticator

/// How an account's devices sync: when each change lands in the store and reaches each device,
/// what a device holds at a moment, and what a writer keeps in step — the store's copy, and the
/// revisions nobody needs any more. See docs/sync.md for the rules.
///
/// Every revision of the account — of every device, removed and reset ones too — stays in this
/// vault for as long as it can matter, so what a device holds never depends on the store being
/// intact: the store is a sealed mirror of what has landed, for anything outside the vault to read.
extension Account {
    /// The moment of a change being made now: the clock, and the vault position it is written at.
    var eventTime: Instant { Instant(ms: now, order: vault.position) }

    /// Everything that has happened by now.
    var present: Instant { .endOf(now) }

    /// The delay draws of a transfer that starts at `time`.
    func schedule(at time: Instant) -> SyncSchedule { SyncSchedule(seed: settings.seed.value(at: time)?.value ?? 0) }

    /// The delays of `device` in force at `time`: its own, else the account's.
    func uploadDelay(of device: DeviceRecord, at time: Instant) -> DelayRange {
        device.uploadDelay.value(at: time) ?? settings.uploadDelay.value(at: time) ?? .none
    }

    func downloadDelay(of device: DeviceRecord, at time: Instant) -> DelayRange {
        device.downloadDelay.value(at: time) ?? settings.downloadDelay.value(at: time) ?? .none
    }

    // MARK: - Revisions

    /// Every revision in this vault, of every device, in the vault's order.
    func localRevisions() throws(VaultError) -> [Revision] {
        try revisions(vault.records(kind: .credential))
    }

    /// `records` read as revisions; each record is read once and kept (``revisionCache``), so a
    /// ceremony that looks at an RP's passkeys twice decodes them once.
    private func revisions(_ records: [VaultRecord]) throws(VaultError) -> [Revision] {
        let first = try DeviceRecord.everyRecord(in: vault)[0]
        var out = [Revision]()
        out.reserveCapacity(records.count)
        for record in records {
            if let cached = revisionCache[record.id], case .local(let seen) = cached.source, seen.version == record.version {
                out.append(cached)
                continue
            }
            let revision = try Revision(record, source: .local(record), firstDevice: first)
            revisionCache[record.id] = revision
            out.append(revision)
        }
        return out
    }

    func tombstone(_ revision: Revision) -> VaultRecord {
        guard case .local(let record) = revision.source else { preconditionFailure("only a local revision is tombstoned") }
        return VaultRecord(id: record.id, kind: .tombstone, version: record.version + 1)
    }

    /// What the schedule needs, read once: revisions (this vault's, then the store's it lacks),
    /// every device record by id (removed ones too), and the passkeys that are device-bound.
    struct History {
        let revisions: [Revision]
        let devices: [[UInt8]: DeviceRecord]
        let current: [DeviceRecord]
        /// Items with a revision made backup-ineligible (`register --device-bound`): they never
        /// leave the device that made them.
        let deviceBound: Set<[UInt8]>

        init(revisions: [Revision], devices every: [DeviceRecord]) {
            self.revisions = revisions
            devices = Dictionary(every.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            current = every.filter { $0.removedAt == nil }
            deviceBound = Set(revisions.filter { !$0.removed && !$0.credential.backupEligible }.map(\.itemId))
        }
    }

    /// The history of every passkey, or of one RP's (found through the vault's index on the RP ID
    /// field, so a ceremony costs the same among ten passkeys or a hundred thousand).
    func history(rpIds: Set<String>? = nil) throws(VaultError) -> History {
        var records = [VaultRecord]()
        if let rpIds {
            for id in rpIds.sorted() { records += try vault.records(kind: .credential, field: CredentialRecord.Tag.rpId, equals: Array(id.utf8)) }
        } else {
            records = try vault.records(kind: .credential)
        }
        let local = try revisions(records)
        let localIds = Set(local.map(\.id))
        let stored = (storeState?.revisions ?? []).filter { !localIds.contains($0.id) && (rpIds?.contains($0.credential.rpId) ?? true) }
        return History(revisions: local + stored, devices: try DeviceRecord.everyRecord(in: vault))
    }

    /// The RP IDs of the passkey whose credential id is `id`, wherever a revision of it is.
    func rpIds(ofCredential id: [UInt8]) throws(VaultError) -> Set<String> {
        let local = try vault.records(kind: .credential, field: CredentialRecord.Tag.credentialId, equals: id)
            .compactMap { $0.field(CredentialRecord.Tag.rpId).flatMap { String(validating: Array($0), as: UTF8.self) } }
        let stored = (storeState?.revisions ?? []).filter { $0.credential.id == id }.map(\.credential.rpId)
        return Set(local + stored)
    }

    // MARK: - The schedule

    /// When `revision` reached (or will reach) the store: as the store recorded it, else by its
    /// device's schedule. `nil`: not while its device is offline, or never — made before its
    /// device's reset or removal and not landed by then, it was lost with the device.
    func landedAt(_ revision: Revision, in history: History) -> Instant? {
        if let landed = revision.storeLandedAt ?? storeState?.landed[revision.id] { return landed }
        guard let origin = history.devices[revision.originId] else { return nil }
        return landing(of: revision.id, from: origin, changedAt: revision.changedAt)
    }

    /// When revision `id`, made by `origin` at `changedAt`, lands in the store.
    func landing(of id: [UInt8], from origin: DeviceRecord, changedAt: Instant) -> Instant? {
        guard let start = SyncSchedule.firstOnline(after: changedAt, offline: origin.offline) else { return nil }
        let landed = start.after(schedule(at: start).delay(uploadDelay(of: origin, at: start), .upload, device: origin.name, revision: id))
        // Before the device's last reset (in write order, whatever the clock said): only what
        // had landed by the reset survived it.
        if changedAt.order < origin.syncedFrom.order && landed > origin.syncedFrom { return nil }
        if let removed = origin.removedAt, landed > removed { return nil }
        return landed
    }

    /// When a revision that landed at `landed` reaches `device`; `nil` while the device is offline.
    func arrival(of id: [UInt8], at device: DeviceRecord, landed: Instant) -> Instant? {
        guard let start = SyncSchedule.firstOnline(after: max(landed, device.syncedFrom), offline: device.offline) else { return nil }
        return start.after(schedule(at: start).delay(downloadDelay(of: device, at: start), .download, device: device.name, revision: id))
    }

    /// When `revision` becomes part of what `device` holds: its own changes since its last reset
    /// at once; anything else once it has landed and downloaded. `nil`: not scheduled yet (a
    /// device offline), or never (lost, or another device's device-bound passkey).
    func visibility(of revision: Revision, to device: DeviceRecord, in history: History) -> Instant? {
        if revision.originId == device.id && revision.changedAt.order >= device.syncedFrom.order { return revision.changedAt }
        guard !history.deviceBound.contains(revision.itemId), let landed = landedAt(revision, in: history) else { return nil }
        return arrival(of: revision.id, at: device, landed: landed)
    }

    /// What `device` holds now: every passkey, or those of `rpIds`.
    func view(of device: DeviceRecord, rpIds: Set<String>? = nil) throws(VaultError) -> DeviceView {
        try sync()
        let history = try history(rpIds: rpIds)
        let now = present
        // A device holds what it made itself whatever its clock says since (a clock stepped back
        // must not hide it); the rest once it has arrived.
        let visible = history.revisions.compactMap { r -> (Revision, Instant)? in
            guard let at = visibility(of: r, to: device, in: history) else { return nil }
            let own = r.originId == device.id && r.changedAt.order >= device.syncedFrom.order
            return own || at <= now ? (r, at) : nil
        }
        return DeviceView(visible: visible, at: now, landedAt: { self.landedAt($0, in: history) },
                          backupStateImmediate: settings.backupStateImmediate)
    }

    // MARK: - The store

    /// Where the account store is: the path the account's settings name (tag 26), else `<vault>/cloud`.
    var storePath: String { settings.storePath ?? path + "/cloud" }

    /// Whether devices sync through the store yet: once there is a second device, a reset, or a
    /// delay setting. A lone device never writes one (its changes upload when one appears).
    var storeInUse: Bool {
        storeState != nil || ((try? deviceRecords().count) ?? 1) > 1 || storeExists
    }

    /// Whether the store's directory exists, looked at once per change of the vault: only a
    /// writer of this vault makes it, and this process is the writer while it asks.
    private var storeExists: Bool {
        (try? vault.derived("Account.storeExists") { DirectoryStore.exists(at: storePath) }) ?? true
    }

    /// Opens (creating) the store and reads what it holds. A store that cannot be used — not a
    /// private directory of the user's, unreadable — is set aside with the reason in
    /// ``storeProblem``, as a cloud that is down would be: every device keeps working from this
    /// vault, and what has landed uploads once the store is usable again.
    func useStore() {
        guard storeState == nil, storeProblem == nil else { return }
        do {
            storeState = StoreState(store: try DirectoryStore(path: storePath, durability: vault.durability))
            try readStore()
        } catch {
            storeState = nil
            storeProblem = "the account store at \(storePath) is not used: \(error.message)"
        }
    }

    /// Every revision the store's objects hold. An object that cannot be read (not a regular file,
    /// too large) or does not open under the account key (damaged, another account's, renamed) is
    /// passed over — the store is not trusted — and noted (``StoreState/unreadable``), for `sync
    /// status` to report as a store problem.
    private func readStore() throws(VaultError) {
        guard let current = storeState else { return }
        var state = StoreState(store: current.store)
        for name in try state.store.names() {
            guard let nameBytes = Hex.bytes(name) else {
                state.unreadable.append(.init(name: name, reason: "not a store object's name"))
                continue
            }
            let bytes: [UInt8]
            do { bytes = try state.store.object(name) } catch {
                state.unreadable.append(.init(name: name, reason: error.message))
                continue
            }
            guard let entries = StorePack.open(bytes, name: nameBytes, key: settings.accountKey, accountId: settings.accountId) else {
                state.unreadable.append(.init(name: name, reason: "does not open under the account key (damaged, truncated, renamed, or another account's)"))
                continue
            }
            state.names.append(name)
            try add(entries, to: &state)
        }
        storeState = state
    }

    /// What is wrong with the store in use, for `sync status`: the objects it holds that cannot be
    /// read, and the revisions too large to upload. `nil` when nothing is (or the store is set
    /// aside: ``storeProblem`` says why).
    var storeObjectProblem: String? {
        guard let state = storeState, !state.unreadable.isEmpty || !state.tooLarge.isEmpty else { return nil }
        var parts = [String]()
        if !state.unreadable.isEmpty {
            parts.append("\(state.unreadable.count) object(s) that cannot be read, passed over: "
                + state.unreadable.map { "\($0.name) (\($0.reason))" }.joined(separator: "; "))
        }
        if !state.tooLarge.isEmpty {
            parts.append("\(state.tooLarge.count) revision(s) too large for one store object (over \(Self.objectBudget) bytes), kept in the vault and not uploaded: "
                + state.tooLarge.map(Hex.string).sorted().joined(separator: ", "))
        }
        return "the account store at \(storePath) holds " + parts.joined(separator: "; and ")
    }

    /// Adds what an object holds to what the store is known to hold.
    private func add(_ entries: [(record: VaultRecord, landedAt: Instant)], to state: inout StoreState) throws(VaultError) {
        let first = try DeviceRecord.everyRecord(in: vault)[0]
        for entry in entries where state.landed[entry.record.id] == nil {
            guard let revision = try? Revision(entry.record, source: .store(landedAt: entry.landedAt, record: entry.record), firstDevice: first)
            else { continue }
            state.revisions.append(revision)
            state.landed[revision.id] = entry.landedAt
            let key = revision.originId + revision.itemId
            state.latest[key] = max(state.latest[key] ?? revision.changedAt, revision.changedAt)
        }
    }

    /// Past this many objects, a writer merges the store.
    package static let mergeThreshold = 32

    /// Writes the newest revision of each (device, passkey) the store holds into as few objects as
    /// the budget allows, then deletes the objects they came from: the store stays about as large
    /// as the account, and an open reads a few objects, not one per change ever made.
    private func mergeStore() throws(VaultError) {
        guard let state = storeState, state.names.count > Self.mergeThreshold else { return }
        var newest = [[UInt8]: Revision]()
        for r in state.revisions {
            let key = r.originId + r.itemId
            if let kept = newest[key], !Revision.precedes(kept, r) { continue }
            newest[key] = r
        }
        let entries = newest.values.compactMap { r -> (record: VaultRecord, landedAt: Instant)? in
            guard case .store(let landed, let record) = r.source else { return nil }
            return (record, landed)
        }.sorted { a, b in a.landedAt != b.landedAt ? a.landedAt < b.landedAt : a.record.id.lexicographicallyPrecedes(b.record.id) }
        let written = try writeObjects(entries)
        for name in state.names { try state.store.delete(name) }
        try (state.store as? DirectoryStore)?.flush()
        var merged = StoreState(store: state.store)
        merged.names = written
        merged.unreadable = state.unreadable
        merged.tooLarge = state.tooLarge
        try add(entries, to: &merged)
        storeState = merged
    }

    /// The most one store object holds, in bytes of records: well under what the store reads back
    /// (``DirectoryStore``'s object limit), whatever a revision weighs.
    static let objectBudget = 768 * 1024

    /// A writer keeps the store in step: it uploads every revision that has landed by now and is
    /// not in the store yet (never a device-bound passkey's, nor one a later revision of the same
    /// device has already superseded in landing). A reader writes nothing: what it computes does
    /// not depend on the store's copy.
    func sync() throws(VaultError) {
        guard vault.access == .write, storeInUse else { return }
        useStore()
        guard let state = storeState else { return }
        // Only what the store lacks is read: in the steady state, the last few changes.
        let missing = try vault.unorderedRecords(kind: .credential).filter { state.landed[$0.id] == nil }
        guard !missing.isEmpty else { return }
        let history = History(revisions: try revisions(missing).sorted { $0.changedAt < $1.changedAt },
                              devices: try DeviceRecord.everyRecord(in: vault))
        let now = present
        var latest = state.latest  // per (device, item): the newest landed change
        var landedNow = [(Revision, Instant)]()
        for r in history.revisions where !history.deviceBound.contains(r.itemId) {
            guard let landed = landedAt(r, in: history), landed <= now else { continue }
            landedNow.append((r, landed))
            let key = r.originId + r.itemId
            latest[key] = max(latest[key] ?? r.changedAt, r.changedAt)
        }
        // A revision too large for one object is never uploaded (no reader could read it back, and
        // every writer would upload it again): it stays in the vault, and sync status says so.
        let pending = landedNow.filter { r, _ in latest[r.originId + r.itemId] == r.changedAt && !state.tooLarge.contains(r.id) }
        do {
            guard !pending.isEmpty else { return }
            let (stored, names, tooLarge) = try upload(pending)
            var known = state
            known.names += names
            known.tooLarge.formUnion(tooLarge)
            try add(stored, to: &known)
            storeState = known
            try mergeStore()
        } catch {
            storeState = nil
            storeProblem = "the account store at \(storePath) is not used: \(error.message)"
        }
    }

    /// Commits a change of passkeys (`records`, new revisions) together with tombstones for the
    /// revisions nobody needs any more — superseded by a later one of the same device that every
    /// device has received — so a change costs one frame, clean-up included.
    /// The new revisions count as made now: on a device alone in its account, each change
    /// replaces the one before in the same frame.
    func commitChange(_ records: [VaultRecord]) throws(VaultError) {
        // A passkey revision must fit one store object, or it could never sync: refused before
        // anything is stored (names are already cut to 64 bytes; this is what nothing can cut).
        for record in records where record.kind == .credential {
            let weight = Self.storeWeight(of: record)
            guard weight <= Self.objectBudget else {
                throw VaultError(.invalid, "the passkey's record would be \(weight) bytes, more than one account store object holds (\(Self.objectBudget)); nothing was stored")
            }
        }
        let rpIds = Set(records.compactMap { $0.field(CredentialRecord.Tag.rpId).flatMap { String(validating: Array($0), as: UTF8.self) } })
        let before = try history(rpIds: rpIds)
        let first = try DeviceRecord.everyRecord(in: vault)[0]
        let made = try records.filter { $0.kind == .credential }.map { record throws(VaultError) in
            try Revision(record, source: .local(record), firstDevice: first)
        }
        let history = History(revisions: before.revisions + made, devices: Array(before.devices.values))
        let madeIds = Set(made.map(\.id))
        let local = history.revisions.filter { if case .local = $0.source { true } else { false } }
        let done = supersededRevisions(local, in: history, at: present).filter { !madeIds.contains($0.id) }
        try vault.commit(done.map(tombstone) + records)
    }

    /// Local revisions a later revision of the same device and passkey outranks on every device
    /// from now on: that one has reached every device of the account, so this one can never be
    /// what a device shows again.
    private func supersededRevisions(_ local: [Revision], in history: History, at now: Instant) -> [Revision] {
        var out = [Revision]()
        for (_, revisions) in Dictionary(grouping: local, by: { $0.originId + $0.itemId }) where revisions.count > 1 {
            let ordered = revisions.sorted(by: Revision.precedes)
            // The newest revision everybody holds; every older one is done with.
            guard let settled = ordered.lastIndex(where: { r in
                history.current.allSatisfy { device in
                    device.id == r.originId || history.deviceBound.contains(r.itemId)
                        || (visibility(of: r, to: device, in: history).map { $0 <= now } ?? false)
                }
            }) else { continue }
            out += ordered[..<settled]
        }
        return out
    }

    /// Seals `revisions` (this vault's) for the store — their private keys sealed again under the
    /// account key — and writes them; returns the entries as stored, the objects' names, and the
    /// ids of the revisions too large for any object (not uploaded).
    private func upload(_ revisions: [(Revision, Instant)]) throws(VaultError)
        -> (entries: [(record: VaultRecord, landedAt: Instant)], names: [String], tooLarge: Set<[UInt8]>) {
        var entries = [(record: VaultRecord, landedAt: Instant)]()
        var tooLarge = Set<[UInt8]>()
        for (revision, landed) in revisions {
            guard case .local(var record) = revision.source else { continue }
            guard Self.storeWeight(of: record) <= Self.objectBudget else {
                tooLarge.insert(record.id)
                continue
            }
            if let sealed = revision.sealedKey {
                let secret = try vault.openSecret(sealed, recordId: record.id)
                record.setField(CredentialRecord.Tag.sealedPrivateKey, settings.accountKey.sealSecret(
                    secret, associatedData: StorePack.itemAssociatedData(accountId: settings.accountId, revisionId: record.id)))
            }
            entries.append((record, landed))
        }
        return (entries, try writeObjects(entries), tooLarge)
    }

    /// What `record` adds to a store object: its encoding in a batch and its landing time.
    static func storeWeight(of record: VaultRecord) -> Int {
        VaultDecoding.encodeBatch([record]).count + 16
    }

    /// Writes `entries` as store objects of at most ``objectBudget`` bytes of records each, and
    /// returns their names.
    private func writeObjects(_ entries: [(record: VaultRecord, landedAt: Instant)]) throws(VaultError) -> [String] {
        guard let state = storeState, !entries.isEmpty else { return [] }
        var names = [String](), batch = [(record: VaultRecord, landedAt: Instant)](), size = 0
        func flush() throws(VaultError) {
            guard !batch.isEmpty else { return }
            // Not from the account's random source: when a writer uploads depends on when it looks
            // (a reader's step in a scenario), and a seeded stream must not depend on that.
            let name = RandomSource.live.bytes(16)
            try state.store.put(Hex.string(name), StorePack.seal(batch, name: name, key: settings.accountKey, accountId: settings.accountId))
            names.append(Hex.string(name))
            batch = []
            size = 0
        }
        for entry in entries {
            let weight = Self.storeWeight(of: entry.record)
            if size + weight > Self.objectBudget { try flush() }
            batch.append(entry)
            size += weight
        }
        try flush()
        return names
    }
}

/// The account store in use, and what it held when last read: its revisions, when each landed,
/// and per (device, passkey) the newest change it holds.
struct StoreState {
    let store: any AccountStore
    /// The objects read (those that opened under the account key).
    var names: [String] = []
    var revisions: [Revision] = []
    var landed: [[UInt8]: Instant] = [:]
    var latest: [[UInt8]: Instant] = [:]
    /// Objects passed over when the store was read, and why.
    var unreadable: [UnreadableObject] = []
    /// Revisions of this vault too large for one object (``Account/objectBudget``): not uploaded.
    var tooLarge: Set<[UInt8]> = []

    struct UnreadableObject {
        let name: String
        let reason: String
    }
}
