import KeyVault
import SyncStore
import VirtualAuthenticator

/// The account store as this vault uses it: the store is opened without reading it whole; a
/// device reads the changes after this vault's cursor (``SyncState``), keeps what other vaults'
/// devices uploaded as replica records in their RP's partition (``StoreReplica``), and uploads
/// from the queue each commit fills — so opening, a ceremony and a sync cost the changes since
/// last time, not the vault. See docs/sync.md, "The store".
extension Account {
    /// Where the account store is: the path the account's settings name (tag 26), else
    /// `<vault>/cloud`; for an account whose store is in memory, a name that says so.
    var storePath: String { memoryStore != nil ? "(in memory)" : settings.storePath ?? path + "/cloud" }

    /// Whether the store is on a PostgreSQL server (its path a `postgresql://` address) rather
    /// than a directory.
    var storeOnServer: Bool { memoryStore == nil && PostgresAddress.names(storePath) }

    /// The store's path as messages show it: an address's password hidden.
    var storeName: String { storeOnServer ? PostgresAddress.redacted(storePath) : storePath }

    /// Whether devices sync through the store yet: once there is a second device, a reset, or a
    /// delay setting. A lone device never writes one (its changes upload when one appears).
    var storeInUse: Bool {
        storeState != nil || ((try? deviceRecords().count) ?? 1) > 1 || storeExists
    }

    /// Whether the store's directory exists, looked at once per change of the vault: only a
    /// writer of this vault makes it, and this process is the writer while it asks.
    private var storeExists: Bool {
        if let memoryStore { return memoryStore.holdsAnything }
        if storeOnServer { return true }  // an account made on a server shares it from the start
        return (try? vault.derived("Account.storeExists") { DirectoryStore.exists(at: storePath) }) ?? true
    }

    /// The account's store, opened (a directory store: made first, by a writer).
    private func openStore(writer: Bool) throws(StoreError) -> any AccountStore {
        if let memoryStore { return memoryStore }
        if storeOnServer { return try PostgresStore(address: PostgresAddress(storePath), create: writer) }
        if writer, DirectoryStore.hasLegacyObjects(at: storePath) { try DirectoryStore.removeLegacyObjects(at: storePath) }
        return try DirectoryStore(path: storePath, create: writer, durable: vault.durability == .full)
    }

    /// The metadata key under which a store keeps its own random id: a vault whose cursor was
    /// into another store (one removed and made again) starts over from the beginning.
    static let storeIdKey = "store-id"

    /// Opens the store and reads the changes after this vault's cursor — a writer creates the
    /// store, and replaces one of the first layout (`objects/`) by the current one, which it fills
    /// from the vault; a reader only opens one that exists, and writes nothing. A store that
    /// cannot be used — not a private directory of the user's, unreadable, gone — is set aside
    /// with the reason in ``storeProblem``, as a cloud that is down would be: every device keeps
    /// working from this vault, and what has landed uploads once the store is usable again.
    func useStore() {
        guard storeState == nil, storeProblem == nil else { return }
        let writer = vault.access == .write
        let saved = (try? savedSyncState()) ?? nil
        do throws(StoreError) {
            let store = try openStore(writer: writer)
            var state = StoreState(store: store, saved: saved ?? SyncState())
            var storeId = try store.metadata([Self.storeIdKey])[Self.storeIdKey]?.bytes
            if storeId == nil, writer {
                let made = VaultRecord.newId()  // not the account's seeded stream: no scenario id moves
                do throws(StoreError) {
                    try store.setMetadata(Self.storeIdKey, made, expecting: 0)
                    storeId = made
                } catch {
                    guard case .conflict = error.kind else { throw error }
                    storeId = try store.metadata([Self.storeIdKey])[Self.storeIdKey]?.bytes
                }
            }
            if saved == nil || saved?.storeId != storeId {
                // Not followed yet (or another store): read it from the start, and upload what
                // it lacks of this vault's.
                state.saved.cursor = 0
                state.saved.unreadable = []
                state.saved.storeId = storeId ?? []
                state.rebuilding = true
                // Where a passkey's revisions end in another store says nothing of this one, where
                // other vaults upload again what it lacks: what was collected before is never forgotten.
                for item in Array(state.collected.keys) { state.collected[item]?.through = .max }
            }
            state.cursor = state.saved.cursor
            state.unreadable = state.saved.unreadable
            storeState = state
            do throws(StoreError) { try download() } catch {
                // A store that went back in time — restored from an older copy, so this vault's
                // cursor is past its last change: read it again from the start, as a store not
                // followed yet, and upload what it lacks of this vault's.
                guard case .invalid = error.kind, state.cursor > 0, try store.extent().head < state.cursor else { throw error }
                state.saved.cursor = 0
                state.saved.unreadable = []
                state.rebuilding = true
                for item in Array(state.collected.keys) { state.collected[item]?.through = .max }
                state.cursor = 0
                state.unreadable = []
                storeState = state
                try download()
            }
            try readAccountMetadata()
        } catch {
            storeState = nil
            storeProblem = "the account store at \(storeName) is not used: \(error.message)"
        }
    }

    /// Reads the store's changes after the cursor (its snapshot first, when the cursor is older).
    /// What another vault's devices made becomes a downloaded revision (a writer keeps it as a
    /// replica record); what this vault's made says when it landed. A change that cannot be read
    /// back, or does not open under the account key (damaged, another account's, planted), is
    /// passed over — the store is not trusted — and noted for `sync status`.
    private func download() throws(StoreError) {
        guard var state = storeState else { return }
        let own = Set(((try? DeviceRecord.everyRecord(in: vault)) ?? []).map(\.id))
        var page: ChangePage
        do throws(StoreError) {
            page = try state.store.allChanges(after: state.cursor)
        } catch {
            guard case .behindSnapshot = error.kind else { throw error }
            guard let snapshot = try state.store.snapshot() else { throw error }
            var entries = 0
            for (index, part) in snapshot.parts.enumerated() {
                entries += take(part, label: "snapshot \(snapshot.sequence) part \(index)", sequence: snapshot.sequence, own: own, into: &state)
            }
            state.cursor = snapshot.sequence
            state.snapshotEntries = UInt64(entries)
            state.unreadable.removeAll()
            page = try state.store.allChanges(after: state.cursor)
        }
        for change in page.changes {
            _ = take(change.object, label: "change \(change.sequence)", sequence: change.sequence, own: own, into: &state)
        }
        state.unreadable += page.unreadable.map { .init(name: "change \($0.sequence)", reason: $0.reason) }
        state.cursor = page.next
        storeState = state
    }

    /// Adds what store object `object` (at `sequence`) holds to `state` (and returns how many
    /// revisions), or notes it unreadable. A revision of a passkey already collected is dropped
    /// (``droppedIfCollected(_:in:)``).
    @discardableResult
    private func take(_ object: StoreObject, label: String, sequence: UInt64, own: Set<[UInt8]>, into state: inout StoreState) -> Int {
        guard let entries = StorePack.open(object.bytes, name: object.id, key: settings.accountKey, accountId: settings.accountId),
              let first = try? DeviceRecord.everyRecord(in: vault)[0]
        else {
            state.unreadable.append(.init(name: label, reason: "does not open under the account key (damaged, truncated, or another account's)"))
            return 0
        }
        for entry in entries where state.landed[entry.record.id] == nil {
            guard let revision = try? Revision(entry.record, source: .store(landedAt: entry.landedAt, record: entry.record), firstDevice: first)
            else { continue }
            guard !droppedIfCollected(revision, in: state) else { continue }
            state.landed[revision.id] = entry.landedAt
            state.sequences[revision.id] = sequence
            if vault.access == .write { state.read.append(.init(sequence: sequence, revision: revision, landedAt: entry.landedAt)) }
            if !own.contains(revision.originId) {
                state.addDownloaded(revision)
                noteDownloaded(revision)
            }
        }
        return entries.count
    }

    /// What is wrong with the store in use, for `sync status`: the changes it holds that cannot be
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
        return "the account store at \(storeName) holds " + parts.joined(separator: "; and ")
    }

    /// Past this many changes after the snapshot (or a quarter of the snapshot's revisions, when
    /// more), a writer compacts the store.
    package static let mergeThreshold = 32

    /// Replaces the store's changes by a snapshot of the newest revision of each (device,
    /// passkey) it holds, in as few parts as the budget allows: the store stays about as large as
    /// the account, and a new device reads the snapshot and what followed, not every change ever
    /// made. It waits for a share of the snapshot's size in changes, so rewriting it costs a
    /// constant per change. A compaction another writer made first wins.
    private func compactStore() throws(StoreError) {
        guard var state = storeState else { return }
        let extent = try state.store.extent()
        guard extent.head - extent.snapshot > max(UInt64(Self.mergeThreshold), state.snapshotEntries / 4) else { return }
        var entries = [[UInt8]: (record: VaultRecord, landedAt: Instant, revision: Revision)]()
        func collect(_ object: StoreObject) {
            guard let opened = StorePack.open(object.bytes, name: object.id, key: settings.accountKey, accountId: settings.accountId),
                  let first = try? DeviceRecord.everyRecord(in: vault)[0] else { return }
            for entry in opened {
                guard let r = try? Revision(entry.record, source: .store(landedAt: entry.landedAt, record: entry.record), firstDevice: first)
                else { continue }
                guard state.collected[r.itemId] == nil else { continue }  // collected: in no snapshot
                let key = r.originId + r.itemId
                if let kept = entries[key], !Revision.precedes(kept.revision, r) { continue }
                entries[key] = (entry.record, entry.landedAt, r)
            }
        }
        var through = extent.snapshot
        if let snapshot = try state.store.snapshot() {
            for part in snapshot.parts { collect(part) }
            through = snapshot.sequence
        }
        let page = try state.store.allChanges(after: through)
        for change in page.changes { collect(change.object) }
        let kept = entries.values.map { (record: $0.record, landedAt: $0.landedAt) }
            .sorted { a, b in a.landedAt != b.landedAt ? a.landedAt < b.landedAt : a.record.id.lexicographicallyPrecedes(b.record.id) }
        do throws(StoreError) {
            try state.store.compact(through: page.next, snapshot: packed(kept))
        } catch {
            guard case .conflict = error.kind else { throw error }
            return
        }
        state.snapshotEntries = UInt64(kept.count)
        // What other writers appended after this vault last read, and the compaction read: taken
        // as a download would take it before the cursor moves past it — otherwise this vault
        // would never read those changes, which the snapshot now holds behind its cursor.
        let own = Set(((try? DeviceRecord.everyRecord(in: vault)) ?? []).map(\.id))
        for change in page.changes where change.sequence > state.cursor {
            _ = take(change.object, label: "change \(change.sequence)", sequence: change.sequence, own: own, into: &state)
        }
        state.cursor = max(state.cursor, page.next)
        state.unreadable.removeAll()
        storeState = state
    }

    /// The most one store object holds, in bytes of records: well under what the store reads back
    /// (``DirectoryStore``'s object limit), whatever a revision weighs.
    static let objectBudget = 768 * 1024

    /// A writer keeps the store in step: it uploads from the queue every revision that has landed
    /// by now and is not in the store yet (never a device-bound passkey's, nor one a later
    /// revision of the same device has already superseded in landing), keeps what other vaults'
    /// devices made as replica records, compacts the store when it is due, and commits its cursor
    /// and queue. A reader writes nothing: what it computes does not depend on the store's copy.
    func sync() throws(VaultError) {
        guard storeInUse else { return }
        // What other writers appended since this process last looked (a long-lived account: a
        // scenario, a server). A reader only reads.
        if storeState != nil {
            do throws(StoreError) {
                try download()
                try readAccountMetadata()
            } catch {
                storeState = nil
                storeProblem = "the account store at \(storeName) is not used: \(error.message)"
            }
        }
        guard vault.access == .write else { return }
        useStore()
        let saved = try savedSyncState() ?? SyncState()
        guard var state = storeState else {
            // Set aside: the queue waits for the store to come back.
            if saved.version == 0 { try vault.commit([saved.record()]) }
            return
        }
        var queue = saved.queue
        if state.rebuilding {
            // Everything of this vault's the store lacks: found by a scan, once per store.
            queue = try vault.unorderedRecords(kind: .credential).compactMap { record -> SyncState.Upload? in
                guard StoreReplica.revisionRecord(record) == nil, state.landed[record.id] == nil,
                      let rp = record.field(CredentialRecord.Tag.rpId) else { return nil }
                return SyncState.Upload(revisionId: record.id, rpId: Array(rp), landsAt: nil,
                                        userHandle: record.field(CredentialRecord.Tag.userHandle).map(Array.init))
            }
            state.rebuilding = false
        }
        let (due, waiting) = try dueUploads(queue, landed: state.landed)
        let (stored, tooLarge) = try upload(due)
        state.tooLarge = tooLarge
        // A revision too large for one object is never uploaded (no reader could read it back):
        // it stays in the vault, and in the queue, and sync status says so.
        queue = waiting + due.filter { tooLarge.contains($0.0.id) }.map { r, landed in
            SyncState.Upload(revisionId: r.id, rpId: Array(r.credential.rpId.utf8), landsAt: landed, userHandle: r.credential.userHandle)
        }
        storeState = state
        do throws(StoreError) {
            if !stored.isEmpty {
                let pack = packing(stored.map { (record: $0.record, landedAt: $0.landedAt) })
                let given = try state.store.append(pack.objects)
                for entry in stored { state.landed[entry.record.id] = entry.landedAt }
                for (entry, object) in zip(stored, pack.placement) {
                    state.sequences[entry.record.id] = given[object]
                    state.read.append(.init(sequence: given[object], revision: entry.revision, landedAt: entry.landedAt))
                }
                let contiguous = given.elementsEqual((0..<UInt64(given.count)).map { state.cursor + 1 + $0 })
                if contiguous { state.cursor += UInt64(given.count) }
                storeState = state
                // Another writer of the store appended meanwhile: read what it did.
                if !contiguous { try download() }
            }
        } catch {
            storeState = nil
            storeProblem = "the account store at \(storeName) is not used: \(error.message)"
            return  // what was not uploaded stays queued for the store's return
        }
        state = storeState ?? state
        var updated = saved
        updated.storeId = state.saved.storeId
        updated.cursor = state.cursor
        updated.queue = queue
        updated.unreadable = state.unreadable
        // What every device has acknowledged, published; what it allows, collected (StoreKnowledge.swift).
        // A store that fails now has still been read and written: what this sync did is committed.
        let (collected, problem) = try settleKnowledge(&state, into: &updated)
        storeState = state
        if let problem {
            setStoreAside(problem)
        } else {
            do throws(StoreError) { try compactStore() } catch { setStoreAside(error) }
            state = storeState ?? state
        }
        updated.snapshotEntries = state.snapshotEntries
        let replicas = try replicaRecords(for: state.downloaded[state.persistedDownloads...])
        state.persistedDownloads = state.downloaded.count
        if storeState != nil { storeState = state }
        guard !replicas.isEmpty || !collected.isEmpty || saved.version == 0 || updated.cursor != saved.cursor || updated.queue != saved.queue
                || updated.storeId != saved.storeId || updated.snapshotEntries != saved.snapshotEntries
                || updated.unreadable.map(\.name) != saved.unreadable.map(\.name) || !updated.sameKnowledge(as: saved)
        else { return }
        if vault.sharing == .held, replicas.isEmpty, collected.isEmpty, saved.version != 0 {
            // A held vault is this process's alone and never reopened: its cursor and queue ride
            // along with the next commit rather than costing one of their own.
            updated.version = saved.version + 1
            pendingSyncState = updated
            return
        }
        try vault.commit(collected + replicas + [updated.record()])
        pendingSyncState = nil
    }

    /// The sync state as this account knows it: the vault's record, or the newer one a sync of a
    /// held vault left to be written with the next commit (``pendingSyncState``). Whatever writes
    /// the state writes this one's successor, one version on.
    func savedSyncState() throws(VaultError) -> SyncState? {
        let stored = try SyncState.storedVersion(in: vault)
        if let pendingSyncState, pendingSyncState.version > stored { return pendingSyncState }
        // Decoded once per version of the record (a version is never written twice with other
        // contents): a sync asks for it several times.
        if let decoded = decodedSyncState, decoded.version == stored { return decoded.state }
        let state = try SyncState.read(in: vault)
        decodedSyncState = (stored, state)
        return state
    }

    /// The queued uploads that may have landed by now, read from their RPs' partitions, with when
    /// each landed; and the rest, still waiting. A queued revision that is gone (superseded and
    /// collected), device-bound, already in the store, or lost with its device is dropped.
    private func dueUploads(_ queue: [SyncState.Upload], landed stored: [[UInt8]: Instant])
        throws(VaultError) -> (due: [(Revision, Instant)], waiting: [SyncState.Upload]) {
        let now = present
        var waiting = [SyncState.Upload](), candidates = [SyncState.Upload]()
        for upload in queue {
            if let at = upload.landsAt, at > now { waiting.append(upload) } else { candidates.append(upload) }
        }
        guard !candidates.isEmpty else { return ([], waiting) }
        let history = History(revisions: [], devices: try DeviceRecord.everyRecord(in: vault), deviceBound: [])
        var landedNow = [(Revision, Instant)]()
        var latest = [[UInt8]: Instant]()
        for upload in candidates where stored[upload.revisionId] == nil {
            guard let rp = String(validating: upload.rpId, as: UTF8.self) else { continue }
            let kept = try rpHistory(scope(rp, user: upload.userHandle))
            guard let r = kept.byId[upload.revisionId], RPHistory.isLocal(r), !kept.locallyDeviceBound(r.itemId) else { continue }
            guard let at = landedAt(r, in: history) else {
                // Offline: it starts when its device is back. Lost with its device: dropped.
                if let origin = history.devices[r.originId], origin.removedAt == nil, !origin.isOnline { waiting.append(upload) }
                continue
            }
            guard at <= now else {
                waiting.append(SyncState.Upload(revisionId: upload.revisionId, rpId: upload.rpId, landsAt: at, userHandle: upload.userHandle))
                continue
            }
            landedNow.append((r, at))
            let key = r.originId + r.itemId
            latest[key] = max(latest[key] ?? r.changedAt, r.changedAt)
        }
        return (landedNow.filter { r, _ in latest[r.originId + r.itemId] == r.changedAt }, waiting)
    }

    /// Replica records for revisions downloaded from other vaults' devices, in their RP's
    /// partition; none for one this vault already keeps.
    private func replicaRecords(for downloaded: ArraySlice<Revision>) throws(VaultError) -> [VaultRecord] {
        var out = [VaultRecord]()
        var added = Set<[UInt8]>()
        for r in downloaded {
            guard case .store(let landed, let record) = r.source else { continue }
            let replica = StoreReplica.record(of: record, landedAt: landed)
            guard try rpHistory(scope(r.credential.rpId, user: r.credential.userHandle)).revisionOfRecord[replica.id] == nil, added.insert(replica.id).inserted else { continue }
            out.append(replica)
        }
        return out
    }

    /// Adds the uploads of `records` (new revisions of this vault's devices) to the queue, when
    /// the vault follows a store: the sync state record to commit with them, or `nil`.
    func queueing(_ made: [Revision], in history: History) throws(VaultError) -> (record: VaultRecord, landsNow: Bool)? {
        guard var saved = try savedSyncState() else { return nil }
        var landsNow = false
        for r in made where !history.deviceBound.contains(r.itemId) {
            let lands = history.devices[r.originId].flatMap { landing(of: r.id, from: $0, changedAt: r.changedAt) }
            saved.queue.append(SyncState.Upload(revisionId: r.id, rpId: Array(r.credential.rpId.utf8), landsAt: lands, userHandle: r.credential.userHandle))
            if let lands, lands <= present { landsNow = true }
        }
        return (saved.record(), landsNow)
    }

    /// Commits a change of passkeys (`records`, new revisions) together with tombstones for the
    /// revisions nobody needs any more — superseded by a later one of the same device that every
    /// device has received — and the new revisions' place in the upload queue, so a change costs
    /// one frame, clean-up included. The new revisions count as made now: on a device alone in
    /// its account, each change replaces the one before in the same frame.
    func commitChange(_ records: [VaultRecord]) throws(VaultError) {
        // A passkey revision must fit one store object, or it could never sync: refused before
        // anything is stored (names are already cut to 64 bytes; this is what nothing can cut).
        for record in records where record.kind == .credential {
            let weight = Self.storeWeight(of: record)
            guard weight <= Self.objectBudget else {
                throw VaultError(.invalid, "the passkey's record would be \(weight) bytes, more than one account store object holds (\(Self.objectBudget)); nothing was stored")
            }
        }
        var scopes = Set<HistoryScope>()
        for record in records {
            guard let rp = record.field(CredentialRecord.Tag.rpId).flatMap({ String(validating: Array($0), as: UTF8.self) }) else { continue }
            scopes.insert(try scope(rp, user: record.field(CredentialRecord.Tag.userHandle).map(Array.init)))
        }
        // (A split RP's change looks at the histories of its users only: what a commit collects
        // of their other passkeys waits for a change of theirs.)
        let kept = try scopes.sorted { $0.rpId != $1.rpId ? $0.rpId < $1.rpId : ($0.user ?? []).lexicographicallyPrecedes($1.user ?? []) }.map { s throws(VaultError) in try rpHistory(s) }
        let devices = try DeviceRecord.everyRecord(in: vault)
        let made = try records.filter { $0.kind == .credential }.map { record throws(VaultError) in
            try Revision(record, source: .local(record), firstDevice: devices[0])
        }
        var deviceBound = kept.reduce(into: Set<[UInt8]>()) { $0.formUnion($1.deviceBound) }
        for r in made where !r.removed && !r.credential.backupEligible { deviceBound.insert(r.itemId) }
        let history = History(revisions: [], devices: devices, deviceBound: deviceBound)
        // Only the (device, passkey) pairs with more than one local revision can hold one that is
        // done with: those the RPs' histories keep, and those this change adds to.
        let madeByGroup = Dictionary(grouping: made, by: RPHistory.groupKey)
        let keys = kept.reduce(into: Set(madeByGroup.keys)) { $0.formUnion($1.severalLocal) }
        let groups = keys.sorted { $0.lexicographicallyPrecedes($1) }.map { key in
            kept.flatMap { $0.localGroups[key] ?? [] } + (madeByGroup[key] ?? [])
        }
        let madeIds = Set(made.map(\.id))
        let done = supersededRevisions(groups, in: history, at: present).filter { !madeIds.contains($0.id) }
        let queued = try queueing(made, in: history)
        try vault.commit(done.map(tombstone) + records + (queued.map { [$0.record] } ?? []))
        // What lands at once uploads at once: the device that made it sends it now, not at its
        // next sync (a device of another vault may be waiting for it).
        if queued?.landsNow == true, storeState != nil { try sync() }
    }

    /// Of `groups` (each the local revisions of one device and passkey), the revisions a later one
    /// of the same group outranks on every device from now on: that one has reached every device
    /// of the account — this vault's by the schedule, other vaults' by what they acknowledged in
    /// the store — so this one can never be what a device shows again.
    private func supersededRevisions(_ groups: [[Revision]], in history: History, at now: Instant) -> [Revision] {
        let elsewhere = knowledgeElsewhere()
        var out = [Revision]()
        for revisions in groups where revisions.count > 1 {
            let ordered = revisions.sorted(by: Revision.precedes)
            // The newest revision everybody holds; every older one is done with.
            guard let settled = ordered.lastIndex(where: { r in
                elsewhere.holds(r) && history.current.allSatisfy { device in
                    device.id == r.originId || history.deviceBound.contains(r.itemId)
                        || (visibility(of: r, to: device, in: history).map { $0 <= now } ?? false)
                }
            }) else { continue }
            out += ordered[..<settled]
        }
        return out
    }

    /// Seals `revisions` (this vault's) for the store — their private keys sealed again under the
    /// account key; returns the entries to store, and the ids of the revisions too large for any
    /// object (not uploaded).
    private func upload(_ revisions: [(Revision, Instant)]) throws(VaultError)
        -> (entries: [(record: VaultRecord, landedAt: Instant, revision: Revision)], tooLarge: Set<[UInt8]>) {
        var entries = [(record: VaultRecord, landedAt: Instant, revision: Revision)]()
        var tooLarge = Set<[UInt8]>()
        for (revision, landed) in revisions {
            guard case .local(var record) = revision.source else { continue }
            guard Self.storeWeight(of: record) <= Self.objectBudget else {
                tooLarge.insert(record.id)
                continue
            }
            if revision.credential.requiresUserVerification, record.field(CredentialRecord.Tag.sealedInVault) == nil {
                record.setField(CredentialRecord.Tag.sealedInVault, vault.vaultId)
            }
            if let sealed = revision.sealedKey {
                let secret = try vault.openSecret(sealed, recordId: record.id)
                record.setField(CredentialRecord.Tag.sealedPrivateKey, settings.accountKey.sealSecret(
                    secret, associatedData: StorePack.itemAssociatedData(accountId: settings.accountId, revisionId: record.id)))
            }
            entries.append((record, landed, revision))
        }
        return (entries, tooLarge)
    }

    /// What `record` adds to a store object: its encoding in a batch and its landing time.
    static func storeWeight(of record: VaultRecord) -> Int {
        VaultDecoding.encodeBatch([record]).count + 16
    }

    /// `entries` sealed as store objects of at most ``objectBudget`` bytes of records each, each
    /// under a new random id.
    private func packed(_ entries: [(record: VaultRecord, landedAt: Instant)]) -> [StoreObject] { packing(entries).objects }

    /// ``packed(_:)``, with the object each entry went into (`placement`, by entry).
    private func packing(_ entries: [(record: VaultRecord, landedAt: Instant)]) -> (objects: [StoreObject], placement: [Int]) {
        var objects = [StoreObject](), batch = [(record: VaultRecord, landedAt: Instant)](), size = 0, placement = [Int]()
        func flush() {
            guard !batch.isEmpty else { return }
            // Not from the account's random source: when a writer uploads depends on when it looks
            // (a reader's step in a scenario), and a seeded stream must not depend on that.
            let id = RandomSource.live.bytes(16)
            objects.append(StoreObject(id: id, bytes: StorePack.seal(batch, name: id, key: settings.accountKey, accountId: settings.accountId)))
            batch = []
            size = 0
        }
        for entry in entries {
            let weight = Self.storeWeight(of: entry.record)
            if size + weight > Self.objectBudget { flush() }
            batch.append(entry)
            placement.append(objects.count)
            size += weight
        }
        flush()
        return (objects, placement)
    }
}


/// The account store in use, as this process has read it: the sync state it started from, how far
/// it has read, when each revision it read landed, what other vaults' devices made (downloaded),
/// and what it could not read.
struct StoreState {
    let store: any AccountStore
    var saved: SyncState
    /// The vault does not follow this store yet: what the store lacks of its revisions is found
    /// by one scan.
    var rebuilding = false
    var cursor: UInt64 = 0
    var snapshotEntries: UInt64 = 0
    var landed: [[UInt8]: Instant] = [:]
    private(set) var downloaded: [Revision] = []
    /// The positions in ``downloaded`` of each RP's revisions: what building one RP's (or one
    /// user's) history looks through, rather than every revision downloaded — a first sync of an
    /// account of 100,000 passkeys over 1,000 RPs builds a history per RP.
    private(set) var downloadedByRP: [String: [Int]] = [:]
    /// How many of ``downloaded`` are kept as replica records already.
    var persistedDownloads = 0
    /// Changes passed over when the store was read, and why.
    var unreadable: [UnreadableObject] = []
    /// Revisions of this vault too large for one object (``Account/objectBudget``): not uploaded.
    var tooLarge: Set<[UInt8]> = []
    /// The store sequence of each revision read or uploaded by this process.
    var sequences: [[UInt8]: UInt64] = [:]
    /// What a writer read or uploaded since it last committed its sync state (StoreKnowledge.swift).
    var read: [ReadRevision] = []
    /// The passkeys collected, by item id.
    var collected: [[UInt8]: SyncState.Deletion] = [:]
    /// The account's device directory as read from the store now.
    var directory: AccountDirectory?
    /// The version of the store's sync settings taken up.
    var settingsVersion: UInt64

    mutating func addDownloaded(_ revision: Revision) {
        downloadedByRP[revision.credential.rpId, default: []].append(downloaded.count)
        downloaded.append(revision)
    }

    /// Keeps only the downloaded revisions `keep` accepts (the others collected).
    mutating func keepDownloaded(where keep: (Revision) -> Bool) {
        let kept = downloaded.enumerated().filter { keep($0.element) }
        persistedDownloads = kept.filter { $0.offset < persistedDownloads }.count
        downloaded = []
        downloadedByRP = [:]
        for (_, revision) in kept { addDownloaded(revision) }
    }

    /// The downloaded revisions of RP `rpId`, in the order they were read.
    func downloaded(ofRP rpId: String) -> [Revision] {
        (downloadedByRP[rpId] ?? []).map { downloaded[$0] }
    }

    /// The downloaded revisions of the RPs `rpIds`, in the order they were read.
    func downloaded(ofRPs rpIds: Set<String>) -> [Revision] {
        rpIds.flatMap { downloadedByRP[$0] ?? [] }.sorted().map { downloaded[$0] }
    }

    init(store: any AccountStore, saved: SyncState) {
        self.store = store
        self.saved = saved
        snapshotEntries = saved.snapshotEntries
        settingsVersion = saved.settingsVersion
        collected = Dictionary(saved.collected.map { ($0.itemId, $0) }, uniquingKeysWith: { a, _ in a })
    }

    /// A revision the store gave (or took from this vault) at `sequence`.
    struct ReadRevision {
        let sequence: UInt64
        let revision: Revision
        let landedAt: Instant
    }

    struct UnreadableObject: Equatable {
        let name: String
        let reason: String
    }
}
