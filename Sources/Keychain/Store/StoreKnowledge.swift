import KeyVault
import SyncStore

/// What this vault knows of the whole account through the store, beyond its changes: the device
/// directory every vault publishes (each device with how far it has read the store), the sync
/// settings `sync set` publishes, and — from what every device has acknowledged — which deletions
/// can be collected. A deletion's revisions go from the vault, and from the store's next snapshot,
/// only once every device of the account (by the store's directory, removed devices excepted) has
/// acknowledged past it; a revision that arrives afterwards for a collected passkey is dropped.
/// See docs/sync.md, "Collection".
extension Account {
    // MARK: - The directory

    /// The account's device directory as this vault knows it: as read from the store now, else as
    /// it was last read (kept in the sync state), so with the store down a vault still knows the
    /// devices of other vaults — their names stay taken, and nothing is collected past them.
    var accountDirectory: AccountDirectory? {
        if let directory = storeLink.state?.directory, !directory.unreadable { return directory }
        guard let saved = try? storeLink.savedSyncState(in: vault), !saved.directory.isEmpty else { return nil }
        return AccountDirectory(plain: saved.directory, version: 0)
    }

    /// The devices of other vaults, not removed, as they published themselves.
    var devicesElsewhere: [PublishedDevice] {
        (accountDirectory?.elsewhere(than: vault.vaultId) ?? []).filter { !$0.removed }
    }

    /// The name of device `id`: this vault's, else as another vault published it.
    func deviceName(id: [UInt8]) -> String {
        if let local = try? DeviceDirectory.of(vault).device(id: id) { return local.name }
        return accountDirectory?.devices.first { $0.id == id }?.name ?? "a device of another vault"
    }

    func setStoreAside(_ error: StoreError) {
        storeLink.setAside("the account store at \(storeName) is not used: \(error.message)")
    }

    // MARK: - Taking up the account's settings

    /// `published` in force from now: in the settings record (a writer's sync) or in memory (a
    /// reader; a writer's look, whose next sync takes them up into the vault, onto what the vault
    /// holds).
    func takeUp(_ published: PublishedSettings) throws(VaultError) {
        let writing = writesAsItReads
        let time = writing ? eventTime : present
        let base = writing ? try AccountSettings.read(in: vault) : settings
        var ups = base.uploadDelay, downs = base.downloadDelay, seeds = base.seed
        if let v = published.uploadDelay, ups.value(at: time) != v { ups.set(v, from: time) }
        if let v = published.downloadDelay, downs.value(at: time) != v { downs.set(v, from: time) }
        if let v = published.seed, seeds.value(at: time)?.value != v { seeds.set(Seed(v), from: time) }
        let immediate = published.backupStateImmediate ?? base.backupStateImmediate
        guard ups != base.uploadDelay || downs != base.downloadDelay || seeds != base.seed
                || immediate != base.backupStateImmediate
        else {
            settings = base
            return
        }
        guard writing else {
            settings = AccountSettings(accountKey: settings.accountKey, accountId: settings.accountId, seed: seeds,
                                       backupStateImmediate: immediate, uploadDelay: ups, downloadDelay: downs, storePath: settings.storePath)
            return
        }
        try DeviceRecord.update(try DeviceRecord.everyRecord(in: vault)[0].id, in: vault) { r throws(VaultError) in
            DeviceRecord.setHistory(ups, AccountSettings.Tag.uploadDelay, in: &r)
            DeviceRecord.setHistory(downs, AccountSettings.Tag.downloadDelay, in: &r)
            DeviceRecord.setHistory(seeds, AccountSettings.Tag.seed, in: &r)
            r.setField(AccountSettings.Tag.backupStateImmediate, [immediate ? 1 : 0])
        }
        settings = try AccountSettings.read(in: vault)
    }

    /// Publishes a `sync set` of the account's settings (`change`, onto what the store holds); with
    /// the store down, it is published at the next sync that can. Nothing to publish to while the
    /// account uses no store (a lone device): a vault that joins later gets the settings with it.
    func publishSettings(_ change: @escaping (inout PublishedSettings) -> Void) throws(VaultError) {
        guard storeInUse else { return }
        notingStoreWrite()
        useStore()
        if let state = storeLink.state {
            var version: UInt64?
            do throws(StoreError) {
                version = try PublishedSettings.publish(change, base: PublishedSettings(settings, at: present), to: state.store,
                                                        settings: settings).version
            } catch {
                setStoreAside(error)
            }
            if let version { return try recordSettingsPublished(version: version) }
        }
        var saved = try storeLink.savedSyncState(in: vault) ?? SyncState()
        saved.settingsToPublish = true
        try vault.commit([saved.record()])
    }

    func recordSettingsPublished(version: UInt64) throws(VaultError) {
        var saved = try storeLink.savedSyncState(in: vault) ?? SyncState()
        saved.settingsVersion = version
        saved.settingsToPublish = false
        storeLink.state?.settingsVersion = version
        try vault.commit([saved.record()])
    }

    // MARK: - Acknowledgements and collection

    /// Whether `revision`, read from the store, is of a passkey already collected, and so dropped:
    /// it never brings the passkey back. One made after the deletion is reported as dropped (the
    /// timeline's `# dropped at …`); one made before it is gone with the rest.
    func droppedIfCollected(_ revision: Revision, in state: StoreState) -> Bool {
        guard let deletion = state.collected[revision.itemId] else { return false }
        if !revision.removed, revision.changedAt.ms >= deletion.deletedAt, !storeLink.droppedRevisions.contains(where: { $0.revisionId == revision.id }) {
            storeLink.noteDropped(DroppedRevision(time: revision.changedAt.ms, device: revision.originName, credentialId: revision.credential.id,
                                                    revisionId: revision.id, deletedBy: deviceName(id: deletion.deleter),
                                                    deletedAt: deletion.deletedAt))
        }
        return true
    }

    /// A writer's sync, once it has read and uploaded: each device of this vault's acknowledged
    /// sequence — every change up to it has reached the device, and nothing the device made waits
    /// to upload (while something of this vault's waits, no acknowledgement moves: a revision in a
    /// queue could otherwise bring back what is collected) — published with this vault's devices in
    /// the directory; then every deletion that all devices of the account have acknowledged is
    /// collected: the tombstones of its passkey's records here are returned, and the passkey is
    /// remembered (by item id) in `next`. A store that fails meanwhile is returned, not thrown: what
    /// was read and uploaded is still committed.
    func settleKnowledge(_ state: inout StoreState, into next: inout SyncState) throws(VaultError)
        -> (gone: [VaultRecord], problem: StoreError?) {
        // As this process holds them, whatever returns early below (a store followed anew marks them).
        next.collected = Self.collectedList(state)
        let devices = try DeviceRecord.everyRecord(in: vault)
        let now = present
        var flights = next.inFlight, pending = next.pendingDeletions
        // Sized once for what was read (a first sync: a whole snapshot).
        var inFlight = Set<[UInt8]>(minimumCapacity: flights.count + state.read.count)
        for f in flights { inFlight.insert(f.revisionId) }
        flights.reserveCapacity(flights.count + state.read.count)
        for read in state.read {
            let r = read.revision
            if inFlight.insert(r.id).inserted {
                flights.append(SyncState.InFlight(sequence: read.sequence, revisionId: r.id, landedAt: read.landedAt, origin: r.originId,
                                                  requirement: read.requirement))
            }
            if r.removed, state.collected[r.itemId] == nil {
                if let i = pending.firstIndex(where: { $0.itemId == r.itemId }) {
                    // Given again — its vault uploaded it again, the store having lost or spoiled
                    // the first — the devices must receive this one: they may never have had the first.
                    pending[i].requirement.merge(read.requirement, uniquingKeysWith: max)
                } else {
                    pending.append(SyncState.Deletion(itemId: r.itemId, sequence: read.sequence, deletedAt: r.changedAt.ms, deleter: r.originId,
                                                      rpId: Array(r.credential.rpId.utf8), userHandle: r.credential.userHandle,
                                                      requirement: read.requirement))
                }
            }
        }
        state.read = []
        // When each change in flight reaches each device: worked out once per change and kept
        // while the schedule stays the same (``FlightArrivals``), not drawn again at every sync.
        let known = storeLink.flightArrivals
        known.use(ViewSchedule(among: devices, settings: settings))
        let arrivals = flights.map { f in
            known.arrivals(of: f) {
                devices.map { d in
                    f.origin == d.id && f.landedAt >= d.syncedFrom ? .zero : arrival(of: f.revisionId, at: d, landed: f.landedAt)
                }
            }
        }
        func arrived(_ flight: Int, at device: Int) -> Bool { arrivals[flight][device].map { $0 <= now } ?? false }
        let published = (state.directory?.devices ?? []).filter { $0.vaultId == vault.vaultId }
        let before = Dictionary(published.map { ($0.id, $0.acknowledged) }, uniquingKeysWith: { a, b in max(a, b) })
        let receivedBefore = Dictionary(published.map { ($0.id, $0.received) }, uniquingKeysWith: { a, b in a.merging(b, uniquingKeysWith: max) })
        let ours = devices.indices.map { k in
            let d = devices[k]
            let waiting = flights.indices.filter { !arrived($0, at: k) }.map { flights[$0] }
            var ack = waiting.lazy.map(\.sequence).min().map { $0 - 1 } ?? state.cursor
            // Of each vault's uploads, what it has read, but for what has not reached the device yet.
            var received = state.chains.heads.mapValues(\.index)
            for f in waiting { for (v, i) in f.requirement { received[v] = min(received[v] ?? 0, i - 1) } }
            if !next.queue.isEmpty {
                ack = min(ack, before[d.id] ?? 0)
                received = receivedBefore[d.id] ?? [:]
            }
            ack = max(min(ack, state.cursor), before[d.id] ?? 0)
            received.merge(receivedBefore[d.id] ?? [:], uniquingKeysWith: max)
            var device = PublishedDevice(id: d.id, vaultId: vault.vaultId, name: d.name, removed: d.removedAt != nil, online: d.isOnline,
                                         enrolled: d.enrollment != nil, syncedFrom: d.syncedFrom.ms, acknowledged: ack,
                                         uploadDelay: uploadDelay(of: d, at: now), downloadDelay: downloadDelay(of: d, at: now))
            device.received = received.filter { $0.value > 0 }
            device.head = state.ownHead
            device.repaired = state.answered
            return device
        }
        let current = devices.indices.filter { devices[$0].removedAt == nil }
        let done = flights.indices.filter { i in current.allSatisfy { arrived(i, at: $0) } }
        for i in done { known.forget(flights[i].revisionId) }
        for i in done.reversed() { flights.remove(at: i) }
        next.inFlight = flights
        next.pendingDeletions = pending
        next.settingsVersion = state.settingsVersion
        let directory: AccountDirectory
        do throws(StoreError) {
            directory = try AccountDirectory.publish(ours, vault: vault.vaultId, to: state.store, settings: settings, known: state.directory,
                                                     fallback: accountDirectory)
        } catch {
            return ([], error)
        }
        state.directory = directory
        // This vault's devices by what it computed now (the store may hold older acknowledgements).
        let account = (directory.elsewhere(than: vault.vaultId) + ours).filter { !$0.removed }
        guard !directory.tooNew, let everyone = account.map(\.acknowledged).min() else { return ([], nil) }
        next.directory = directory.plain(cache: &storeLink.directoryPlain)
        // What every device has received, counted by the numbers each vault gives its uploads (a
        // deletion from an object that names none, of authctl 0.3 or earlier: by store sequence).
        func collectable(_ d: SyncState.Deletion) -> Bool {
            d.requirement.isEmpty ? d.sequence <= everyone : account.allSatisfy { $0.holds(d.requirement) }
        }
        let due = pending.filter(collectable)
        let throughUnknown = state.collected.values.contains { $0.through == nil }
        guard !due.isEmpty || throughUnknown || state.collected.count > Self.collectedKept else { return ([], nil) }
        // The head now, after every device's acknowledgement was read: what a device made of a
        // passkey before it had the deletion, it uploaded before it acknowledged, so at or before this.
        let extent: StoreExtent
        do throws(StoreError) { extent = try state.store.extent() } catch { return ([], error) }
        var gone = [VaultRecord]()
        if !due.isEmpty {
            next.pendingDeletions = pending.filter { !collectable($0) }
            let items = Set(due.map(\.itemId))
            // Each passkey's records among its user's of its RP (on a split RP, the user's shard
            // alone is read), or, its user not known, among the RP's.
            var places = Set<[[UInt8]]>()  // [RP ID] (the RP read whole), or [RP ID, user handle]
            for d in due { places.insert(d.userHandle.map { [d.rpId, $0] } ?? [d.rpId]) }
            for place in places.sorted(by: { $0.lexicographicallyPrecedes($1) { $0.lexicographicallyPrecedes($1) } }) {
                let records = place.count == 2
                    ? try vault.records(kind: .credential, field: CredentialRecord.Tag.rpId, equals: place[0], shard: place[1])
                    : try vault.records(kind: .credential, field: CredentialRecord.Tag.rpId, equals: place[0])
                for (record, r) in zip(records, try readModel.revisions(records)) where items.contains(r.itemId) && !gone.contains(where: { $0.id == record.id }) {
                    gone.append(VaultRecord(id: record.id, kind: .tombstone, version: record.version + 1))
                    readModel.forgetRevision(ofRecord: record.id)
                }
            }
            for var deletion in due {
                deletion.through = extent.head
                state.collected[deletion.itemId] = deletion
            }
            state.keepDownloaded { !items.contains($0.itemId) }
        }
        for item in state.collected.keys.filter({ state.collected[$0]?.through == nil }) { state.collected[item]?.through = extent.head }
        forgetCollected(&state, extent: extent)
        next.collected = Self.collectedList(state)
        return (gone, nil)
    }

    /// The passkeys collected, as the sync state lists them: by the deletion's sequence.
    private static func collectedList(_ state: StoreState) -> [SyncState.Deletion] {
        state.collected.values.sorted {
            $0.sequence != $1.sequence ? $0.sequence < $1.sequence : $0.itemId.lexicographicallyPrecedes($1.itemId)
        }
    }

    /// How many collected passkeys a vault remembers at least, the most recently collected: a
    /// revision of one of them that still arrives (from a device the directory does not know) is
    /// dropped, as any revision of a collected passkey is while it is remembered.
    static let collectedKept = 256

    /// Forgets the collected passkeys past the newest ``collectedKept`` that no revision can bring
    /// back: every revision of one is at or before the head read when it was collected
    /// (``SyncState/Deletion/through``), this vault has read past that (the cursor), and the
    /// store's snapshot is past it too — a snapshot made since leaves the passkey out when its maker
    /// remembered it, or holds its deletion beside any later revision, which the deletion then
    /// drops. Without this the list grew with every deletion ever collected, and each commit of the
    /// sync state wrote it whole (docs/benchmarks.md, "churn").
    private func forgetCollected(_ state: inout StoreState, extent: StoreExtent) {
        guard state.collected.count > Self.collectedKept else { return }
        let safe = min(state.cursor, extent.snapshot)
        let oldestFirst = state.collected.values.sorted { a, b in
            let x = a.through ?? .max, y = b.through ?? .max
            return x != y ? x < y : a.sequence != b.sequence ? a.sequence < b.sequence : a.itemId.lexicographicallyPrecedes(b.itemId)
        }
        for deletion in oldestFirst.dropLast(Self.collectedKept) where (deletion.through ?? .max) <= safe {
            state.collected[deletion.itemId] = nil
        }
    }

    /// When each change in flight (``SyncState/InFlight``) reaches each device of this vault, as
    /// ``settleKnowledge(_:into:)`` asks at every sync: a delay drawn (a SHA-256 of the seed, the
    /// device and the revision) for every change and device at every sync made a dense day's syncs
    /// grow with what was in flight (docs/benchmarks.md, "The dense day"). An arrival is a pure
    /// function of when the change landed and the schedule — every device's name, delays, reset,
    /// removal and offline spans, and the account's seed and delay histories (``ViewSchedule``) —
    /// so each is worked out once, when its change is first asked about, and kept while the
    /// schedule stays the same; a schedule that changes in any way (a device goes offline or comes
    /// back, a delay is set, a device is reset) forgets them all, and they are worked out again
    /// under the new one, as they would have been without this.
    final class FlightArrivals {
        private var schedule: ViewSchedule?
        /// By revision id: when it landed (the key, with the id), and its arrival at each device in
        /// the order of the schedule's devices (``Instant/zero``: held at once, the device's own).
        private var byRevision = [[UInt8]: (landedAt: Instant, at: [Instant?])]()

        /// Arrivals from now on are under `schedule`: when it is not the one they were worked out
        /// under, they are all forgotten.
        func use(_ schedule: ViewSchedule) {
            guard schedule != self.schedule else { return }
            self.schedule = schedule
            byRevision = [:]
        }

        /// The arrivals of `flight` at each device, worked out by `make` the first time.
        func arrivals(of flight: SyncState.InFlight, _ make: () -> [Instant?]) -> [Instant?] {
            if let known = byRevision[flight.revisionId], known.landedAt == flight.landedAt { return known.at }
            let at = make()
            byRevision[flight.revisionId] = (flight.landedAt, at)
            return at
        }

        /// `revisionId` has reached every device: it is not asked about again.
        func forget(_ revisionId: [UInt8]) { byRevision[revisionId] = nil }

        /// How many changes' arrivals are kept (for tests).
        var count: Int { byRevision.count }
    }

    /// What the devices of other vaults hold, by what they have received of this vault's uploads,
    /// for collecting superseded revisions (``supersededRevisions(_:in:at:)``).
    struct Elsewhere {
        /// The devices of other vaults, not removed.
        let others: [PublishedDevice]
        /// The directory is of a format this authctl does not read: nothing is known to be held.
        let unknown: Bool
        let vaultId: [UInt8]
        /// The place in this vault's chain of each revision uploaded by this process.
        let uploadIndex: [[UInt8]: UInt64]
        /// This vault's chain when it opened: what it had uploaded before is at or before it.
        let headAtOpen: UInt64
        /// The vault position when it opened: a revision written since is in the store only with a
        /// place this process knows.
        let positionAtOpen: UInt64
        /// The revisions waiting in the upload queue; made only when another vault has a device
        /// (``holds(_:)`` asks nothing else then): a dense account's queue of hundreds of uploads
        /// was otherwise hashed whole at every change.
        let queued: Set<[UInt8]>

        /// Whether every device of another vault holds revision `r` of this vault.
        func holds(_ r: Revision) -> Bool {
            guard !unknown else { return false }
            guard !others.isEmpty else { return true }
            let index: UInt64
            if let uploaded = uploadIndex[r.id] {
                index = uploaded
            } else {
                guard r.changedAt.order < positionAtOpen, !queued.contains(r.id) else { return false }
                index = headAtOpen
            }
            return others.allSatisfy { ($0.received[vaultId] ?? 0) >= index }
        }
    }

    func knowledgeElsewhere() -> Elsewhere {
        let saved = (try? storeLink.savedSyncState(in: vault)) ?? nil
        let others = devicesElsewhere, unknown = accountDirectory?.tooNew == true
        return Elsewhere(others: others, unknown: unknown, vaultId: vault.vaultId, uploadIndex: storeLink.state?.uploadIndex ?? [:],
                         headAtOpen: (storeLink.state?.saved ?? saved)?.ownHead.index ?? .max, positionAtOpen: storeLink.positionAtOpen,
                         queued: others.isEmpty || unknown ? [] : Set((saved?.queue ?? []).map(\.revisionId)))
    }
}
