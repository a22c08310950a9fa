import KeyVault
import SyncStore
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

    /// The schedule of this account's transfers (SyncTimeline.swift), from its settings now.
    var timeline: SyncTimeline {
        SyncTimeline(seed: settings.seed, uploadDelays: settings.uploadDelay, downloadDelays: settings.downloadDelay)
    }

    func uploadDelay(of device: DeviceRecord, at time: Instant) -> DelayRange { timeline.uploadDelay(of: device, at: time) }
    func downloadDelay(of device: DeviceRecord, at time: Instant) -> DelayRange { timeline.downloadDelay(of: device, at: time) }

    // MARK: - Revisions

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
            self.init(revisions: revisions, devices: every,
                      deviceBound: Set(revisions.filter { !$0.removed && !$0.credential.backupEligible }.map(\.itemId)))
        }

        /// With the device-bound items known already (an ``RPHistory`` keeps them).
        init(revisions: [Revision], devices every: [DeviceRecord], deviceBound: Set<[UInt8]>) {
            self.revisions = revisions
            devices = Dictionary(every.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            current = every.filter { $0.removedAt == nil }
            self.deviceBound = deviceBound
        }
    }

    /// The revisions of RP `rpId` (``RPHistory``): read from its partition the first time, then
    /// kept in step with each record that changes and each revision downloaded.
    func rpHistory(_ rpId: String) throws(VaultError) -> RPHistory { try rpHistory(.whole(rpId)) }

    /// Where the revisions of user `user`'s passkeys of RP `rpId` are read from: the RP's history
    /// when one is kept (a discoverable sign-in read it); else that user's alone — on an RP the
    /// vault splits, the shard that holds them — so a ceremony naming a passkey or a user of an
    /// RP of a hundred thousand passkeys reads and resolves a few.
    func scope(_ rpId: String, user: [UInt8]?) throws(VaultError) -> HistoryScope {
        guard let user, try readsByUser(rpId) else { return .whole(rpId) }
        return HistoryScope(rpId: rpId, user: user)
    }

    /// Whether the passkeys of RP `rpId` are read a user at a time (``scope(_:user:)``).
    func readsByUser(_ rpId: String) throws(VaultError) -> Bool {
        try histories().byScope[.whole(rpId)] == nil
    }

    private func histories() throws(VaultError) -> RPHistories {
        let all = try vault.derived("Account.rpHistories", { RPHistories() }, following: { $0.follow($1) })
        if all.storeGeneration != storeLink.generation { all.reset(generation: storeLink.generation) }
        return all
    }

    /// The revisions of `scope` (``RPHistory``): read from the vault the first time (the RP's
    /// partition, or the user's shard of it), then kept in step with each record that changes
    /// and each revision downloaded.
    func rpHistory(_ scope: HistoryScope) throws(VaultError) -> RPHistory {
        let all = try histories()
        if !all.queued.isEmpty {
            let queued = all.queued
            all.queued = []
            for record in queued {
                let credential = record.kind == .credential
                let rp = credential
                    ? record.field(CredentialRecord.Tag.rpId).flatMap { String(validating: Array($0), as: UTF8.self) } : all.rpOfRecord[record.id]
                guard let rp else { continue }
                let user = credential ? record.field(CredentialRecord.Tag.userHandle).map(Array.init) : all.userOfRecord[record.id]
                for kept in all.scopes(rp: rp, user: user) {
                    let history = all.byScope[kept]!
                    guard credential else {
                        history.remove(recordId: record.id)
                        continue
                    }
                    // A new version of a record it holds (a key rotation seals every key again): read afresh.
                    guard history.revisionOfRecord[record.id] == nil else {
                        all.forget(kept)
                        continue
                    }
                    history.add(try readModel.revisions([record])[0], recordId: record.id)
                    all.rpOfRecord[record.id] = rp
                    if kept.user != nil { all.userOfRecord[record.id] = kept.user }
                }
                if !credential {
                    all.rpOfRecord[record.id] = nil
                    all.userOfRecord[record.id] = nil
                }
            }
        }
        if let history = all.byScope[scope] { return history }
        let history = RPHistory()
        let records: [VaultRecord]
        if let user = scope.user {
            records = try vault.records(kind: .credential, field: CredentialRecord.Tag.rpId, equals: Array(scope.rpId.utf8), shard: user)
        } else {
            records = try vault.records(kind: .credential, field: CredentialRecord.Tag.rpId, equals: Array(scope.rpId.utf8))
        }
        history.reserveCapacity(records.count)
        for (record, revision) in zip(records, try readModel.revisions(records)) {
            history.add(revision, recordId: record.id)
            all.rpOfRecord[record.id] = scope.rpId
            if let user = scope.user { all.userOfRecord[record.id] = user }
        }
        for r in storeLink.downloaded(ofRP: scope.rpId) where scope.user.map({ $0 == r.credential.userHandle }) ?? true {
            history.add(r, recordId: nil)
        }
        all.keep(history, as: scope)
        return history
    }

    /// A revision downloaded from the store, into the histories of its RP and user if kept.
    func noteDownloaded(_ revision: Revision) {
        guard let all = try? vault.derived("Account.rpHistories", { RPHistories() }, following: { $0.follow($1) }),
              all.storeGeneration == storeLink.generation else { return }
        for scope in all.scopes(rp: revision.credential.rpId, user: revision.credential.userHandle) {
            all.byScope[scope]!.add(revision, recordId: nil)
        }
    }

    /// The history of every passkey, or of one RP's (found through the vault's index on the RP ID
    /// field, so a ceremony costs the same among ten passkeys or a hundred thousand).
    func history(rpIds: Set<String>? = nil) throws(VaultError) -> History {
        if let rpIds, rpIds.count == 1 {
            let kept = try rpHistory(rpIds.first!)
            return History(revisions: kept.revisions, devices: try DeviceRecord.everyRecord(in: vault), deviceBound: kept.deviceBound)
        }
        return try historyFromRecords(rpIds: rpIds)
    }

    /// The history read afresh from the vault's records (and the store's downloads), as a new
    /// process reads it: what the kept ``RPHistory`` must always equal (IncrementalHistoryTests).
    func historyFromRecords(rpIds: Set<String>?) throws(VaultError) -> History {
        var records = [VaultRecord]()
        if let rpIds {
            for id in rpIds.sorted() { records += try vault.records(kind: .credential, field: CredentialRecord.Tag.rpId, equals: Array(id.utf8)) }
        } else {
            records = try vault.records(kind: .credential)
        }
        var seen = Set<[UInt8]>()
        var revisions = [Revision]()
        for r in try readModel.revisions(records) where seen.insert(r.id).inserted { revisions.append(r) }
        let downloaded = rpIds.map { ids in storeLink.downloaded(ofRPs: ids) } ?? storeLink.downloaded
        for r in downloaded where seen.insert(r.id).inserted {
            revisions.append(r)
        }
        return History(revisions: revisions, devices: try DeviceRecord.everyRecord(in: vault))
    }

    /// The RP ID and user handle of each passkey whose credential id is `id`, wherever a revision
    /// of it is (as a rule one; two RPs' passkeys may share an id).
    func owners(ofCredential id: [UInt8]) throws(VaultError) -> Set<HistoryScope> {
        var out = Set<HistoryScope>()
        for record in try vault.records(kind: .credential, field: CredentialRecord.Tag.credentialId, equals: id) {
            guard let rp = record.field(CredentialRecord.Tag.rpId).flatMap({ String(validating: Array($0), as: UTF8.self) }) else { continue }
            out.insert(HistoryScope(rpId: rp, user: record.field(CredentialRecord.Tag.userHandle).map(Array.init)))
        }
        for r in storeLink.downloaded where r.credential.id == id {
            out.insert(HistoryScope(rpId: r.credential.rpId, user: r.credential.userHandle))
        }
        return out
    }

    // MARK: - The schedule

    /// When `revision` reached (or will reach) the store: as the store recorded it, else by its
    /// device's schedule. `nil`: not while its device is offline, or never — made before its
    /// device's reset or removal and not landed by then, it was lost with the device.
    func landedAt(_ revision: Revision, in history: History) -> Instant? {
        if let landed = revision.storeLandedAt ?? storeLink.landing(of: revision.id) { return landed }
        guard let origin = history.devices[revision.originId] else { return nil }
        return landing(of: revision.id, from: origin, changedAt: revision.changedAt)
    }

    /// When revision `id`, made by `origin` at `changedAt`, lands in the store (``SyncTimeline``).
    func landing(of id: [UInt8], from origin: DeviceRecord, changedAt: Instant) -> Instant? {
        timeline.landing(of: id, from: origin, changedAt: changedAt)
    }

    /// When a revision that landed at `landed` reaches `device` (``SyncTimeline``).
    func arrival(of id: [UInt8], at device: DeviceRecord, landed: Instant) -> Instant? {
        timeline.arrival(of: id, at: device, landed: landed)
    }

    /// When `revision` becomes part of what `device` holds: its own changes since its last reset
    /// at once; anything else once it has landed and downloaded. `nil`: not scheduled yet (a
    /// device offline), or never (lost, or another device's device-bound passkey).
    func visibility(of revision: Revision, to device: DeviceRecord, in history: History) -> Instant? {
        if revision.originId == device.id && revision.changedAt.order >= device.syncedFrom.order { return revision.changedAt }
        guard !history.deviceBound.contains(revision.itemId), let landed = landedAt(revision, in: history) else { return nil }
        return arrival(of: revision.id, at: device, landed: landed)
    }

    /// What `device` holds now: every passkey, or those of `rpIds` (one RP's from its kept view).
    /// Computed from what the vault holds and the store as last read (``readStoreForRequest()``),
    /// at the clock's time: a view reads and writes nothing of the store.
    func view(of device: DeviceRecord, rpIds: Set<String>? = nil) throws(VaultError) -> DeviceView {
        if let rpIds, rpIds.count == 1 { return try keptView(of: device, rpId: rpIds.first!) }
        if rpIds == nil, let every = try everyRP() { return try keptView(of: device, rpIds: every) }
        return view(of: device, in: try history(rpIds: rpIds))
    }

    /// Every RP a passkey revision is of — in the vault's records (through its index on the RP ID
    /// field) or downloaded from the store — sorted; `nil` when a record's RP ID is not UTF-8
    /// (such a record is read with the whole history, as before).
    func everyRP() throws(VaultError) -> [String]? {
        var rps = Set(storeLink.state?.downloadedByRP.keys.map { $0 } ?? [])
        for value in try vault.fieldValues(kind: .credential, field: CredentialRecord.Tag.rpId) {
            guard let rp = String(validating: value, as: UTF8.self) else { return nil }
            rps.insert(rp)
        }
        return rps.sorted()
    }

    /// What `device` holds now of every RP of `rpIds`, from each RP's kept view: a device's whole
    /// list (a scenario's hourly `holds`) costs what changed since it was last asked for, not
    /// the whole account's schedule again. In ``DeviceView/creationOrder(_:_:)``, as the view of
    /// the whole history lists them (KeptViewTests).
    func keptView(of device: DeviceRecord, rpIds: [String]) throws(VaultError) -> DeviceView {
        if rpIds.count == 1 { return try keptView(of: device, rpId: rpIds[0]) }
        var items = [DeviceView.Item]()
        for rp in rpIds { items += try keptView(of: device, rpId: rp).items }
        return DeviceView(ordered: items.indices.sorted { DeviceView.creationOrder(items[$0], items[$1]) }.map { items[$0] })
    }

    /// What `device` holds now of every passkey, computed from the whole history read afresh
    /// (``historyFromRecords(rpIds:)``): what ``view(of:rpIds:)`` must equal.
    func viewFromRecords(of device: DeviceRecord) throws(VaultError) -> DeviceView {
        view(of: device, in: try historyFromRecords(rpIds: nil))
    }

    /// What `device` holds now of the passkeys of `scope` (``scope(_:user:)``): of one RP, or of
    /// one user of it — a view to find that user's passkeys in, and nothing else.
    func view(of device: DeviceRecord, scope: HistoryScope) throws(VaultError) -> DeviceView {
        try keptView(of: device, scope: scope)
    }

    /// What `device` holds now of `rpId`, from its ``KeptDeviceView``: brought up to date with
    /// what changed since it was last asked for, or made afresh when its schedule changed.
    func keptView(of device: DeviceRecord, rpId: String) throws(VaultError) -> DeviceView {
        try keptView(of: device, scope: .whole(rpId))
    }

    func keptView(of device: DeviceRecord, scope: HistoryScope) throws(VaultError) -> DeviceView {
        let history = try rpHistory(scope)
        let directory = try DeviceDirectory.of(vault)
        let every = directory.every
        let schedule = ViewSchedule(of: device, among: directory, settings: settings, storeGeneration: storeLink.generation)
        let all = try vault.derived("Account.deviceViews", { KeptDeviceViews() }, following: { _, _ in true })
        let key = KeptDeviceViews.Key(device: device.id, scope: scope)
        let now = present
        let kept: KeptDeviceView
        if let held = all.byKey[key], held.holds(under: schedule, history: history, at: now) {
            kept = held
        } else {
            kept = KeptDeviceView(schedule: schedule, history: history)
            all.byKey[key] = kept
        }
        let known = History(revisions: [], devices: every, deviceBound: history.deviceBound)
        kept.advance(to: now, visibility: { r in
            visibility(of: r, to: device, in: known).map { ($0, r.originId == device.id && r.changedAt.order >= device.syncedFrom.order) }
        }, landedAt: { landedAt($0, in: known) }, backupStateImmediate: settings.backupStateImmediate)
        return kept.view
    }

    /// What `device` holds now of `rpId`, from the history read afresh (``historyFromRecords(rpIds:)``).
    func viewFromRecords(of device: DeviceRecord, rpId: String) throws(VaultError) -> DeviceView {
        view(of: device, in: try historyFromRecords(rpIds: [rpId]))
    }

    private func view(of device: DeviceRecord, in history: History) -> DeviceView {
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
}
