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
    var storePath: String { storeLink.memoryStore != nil ? "(in memory)" : settings.storePath ?? path + "/cloud" }

    /// Whether the store is on a PostgreSQL server (its path a `postgresql://` address) rather
    /// than a directory.
    var storeOnServer: Bool { storeLink.memoryStore == nil && PostgresAddress.names(storePath) }

    /// The store's path as messages show it: an address's password hidden.
    var storeName: String { storeOnServer ? PostgresAddress.redacted(storePath) : storePath }

    /// Whether devices sync through the store yet: once there is a second device, a reset, or a
    /// delay setting. A lone device never writes one (its changes upload when one appears).
    var storeInUse: Bool {
        storeLink.state != nil || ((try? deviceRecords().count) ?? 1) > 1 || storeExists
    }

    /// Whether the store's directory exists, looked at once per change of the vault: only a
    /// writer of this vault makes it, and this process is the writer while it asks.
    private var storeExists: Bool {
        if let memoryStore = storeLink.memoryStore { return memoryStore.holdsAnything }
        if let override = Self.storeHere { return override.exists(storePath) }
        if storeOnServer { return true }  // an account made on a server shares it from the start
        return (try? vault.derived("Account.storeExists") { DirectoryStore.exists(at: storePath) }) ?? true
    }

    /// The stores the accounts opened within one task use instead of what their path names (a
    /// test's store that misbehaves on purpose).
    package struct StoreOverride: Sendable {
        package let open: @Sendable (String) -> (any AccountStore & Sendable)?
        package let exists: @Sendable (String) -> Bool

        package init(open: @escaping @Sendable (String) -> (any AccountStore & Sendable)?, exists: @escaping @Sendable (String) -> Bool) {
            self.open = open
            self.exists = exists
        }
    }

    @TaskLocal package static var storeHere: StoreOverride?

    /// The account's store, opened (a directory store: made first, by a writer).
    func openStore(writer: Bool) throws(StoreError) -> any AccountStore {
        if let memoryStore = storeLink.memoryStore { return memoryStore }
        if let override = Self.storeHere, let store = override.open(storePath) { return store }
        if storeOnServer { return try PostgresStore(address: PostgresAddress(storePath), create: writer) }
        if writer, DirectoryStore.hasLegacyObjects(at: storePath) { try DirectoryStore.removeLegacyObjects(at: storePath) }
        return try DirectoryStore(path: storePath, create: writer, durable: vault.durability == .full)
    }

    /// The metadata key under which a store keeps its own random id: a vault whose cursor was
    /// into another store (one removed and made again) starts over from the beginning.
    static let storeIdKey = "store-id"

    /// What is wrong with the store in use, for `sync status`: the changes it holds that cannot be
    /// read, and the revisions too large to upload. `nil` when nothing is (or the store is set
    /// aside: ``storeProblem`` says why).
    var storeObjectProblem: String? {
        guard let state = storeLink.state, !state.unreadable.isEmpty || !state.tooLarge.isEmpty else { return nil }
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
    /// passkey) it holds, in as few parts as the budget allows, with the list of its parts
    /// (``SnapshotManifest``): the store stays about as large as the account, and a new device
    /// reads the snapshot and what followed, not every change ever made. It waits for a share of
    /// the snapshot's size in changes, so rewriting it costs a constant per change. A compaction
    /// another writer made first wins.
    ///
    /// It never compacts over what is wrong in the store — a snapshot part missing or altered, a
    /// vault's upload missing or forked — which would make a loss permanent, unless a repair every
    /// vault answered was asked after it (every vault has uploaded again what it holds); and after
    /// such a repair it compacts at once, so what was wrong is replaced.
    private func compactStore() throws(StoreError) {
        guard var state = storeLink.state else { return }
        let extent = try state.store.extent()
        let repaired = state.repair.request.flatMap { r in answeredByAll(r.id, in: state, answered: state.answered) ? r : nil }
        let due = extent.head - extent.snapshot > max(UInt64(Self.mergeThreshold), state.snapshotEntries / 4)
        let healing = repaired.map { extent.snapshot < $0.head && extent.head > extent.snapshot } ?? false
        guard due || healing else { return }
        // What is wrong in what the compaction reads is replaced by it, once every vault has been
        // asked to give back what it holds (a repair request asked past it): what the store lost
        // then comes back from them, whenever they sync. Before that, it is named and asked for.
        func covered(_ sequence: UInt64) -> Bool { !Self.storeChecks || (state.repair.request.map { $0.head >= sequence } ?? false) }
        var flaws = [StoreFinding]()
        var entries = [[UInt8]: (record: VaultRecord, landedAt: Instant, revision: Revision)]()
        func collect(_ object: StoreObject) -> UploadLink? {
            guard let opened = StorePack.open(object.bytes, name: object.id, key: settings.accountKey, accountId: settings.accountId),
                  let first = try? DeviceRecord.everyRecord(in: vault)[0] else { return nil }
            for entry in opened.entries {
                guard let r = try? Revision(entry.record, source: .store(landedAt: entry.landedAt, record: entry.record), firstDevice: first)
                else { continue }
                guard state.collected[r.itemId] == nil else { continue }  // collected: in no snapshot
                let key = r.originId + r.itemId
                if let kept = entries[key], !Revision.precedes(kept.revision, r) { continue }
                entries[key] = (entry.record, entry.landedAt, r)
            }
            return opened.link
        }
        var through = extent.snapshot
        var chains = StoreChains()
        if let snapshot = try state.store.snapshot() {
            let checked = SnapshotManifest.check(snapshot, key: settings.accountKey, accountId: settings.accountId)
            let unlisted = checked.manifest == nil && state.saved.snapshotsListed
            if (!checked.problems.isEmpty || unlisted), !covered(snapshot.sequence) {
                flaws.append(StoreFinding(.snapshot, (checked.problems.first ?? "the snapshot up to change \(snapshot.sequence) lists none of its parts (its list was dropped)") + ", found compacting",
                                          remedy: .repair, location: snapshot.sequence))
            }
            for part in checked.parts { _ = collect(part) }
            chains.heads = checked.manifest?.heads ?? [:]
            through = snapshot.sequence
        }
        let page = try state.store.allChanges(after: through)
        for change in page.changes {
            guard let link = collect(change.object), let broken = chains.follow(link, digest: ChainPosition.digest(of: change.object)) else { continue }
            switch broken {
            case .replayed, .behind: continue
            case .missing, .forked:
                if !covered(change.sequence), let flaw = finding(broken, link: link, at: change.sequence) {
                    flaws.append(StoreFinding(flaw.kind, flaw.message + ", found compacting", remedy: .repair, vault: link.vault, location: change.sequence))
                }
            }
        }
        guard flaws.isEmpty else {
            storeLink.state = state
            note(flaws)
            return
        }
        let kept = entries.values.map { (record: $0.record, landedAt: $0.landedAt) }
            .sorted { a, b in a.landedAt != b.landedAt ? a.landedAt < b.landedAt : a.record.id.lexicographicallyPrecedes(b.record.id) }
        let parts = batches(kept).map { batch in
            // Not from the account's random source: when a writer compacts depends on when it looks.
            let id = RandomSource.live.bytes(16)
            return StoreObject(id: id, bytes: StorePack.seal(batch, link: nil, name: id, key: settings.accountKey, accountId: settings.accountId))
        }
        let manifest = SnapshotManifest.sealed(through: page.next, heads: chains.heads, parts: parts, key: settings.accountKey,
                                               accountId: settings.accountId)
        do throws(StoreError) {
            try state.store.compact(through: page.next, snapshot: [manifest] + parts)
        } catch {
            guard case .conflict = error.kind else { throw error }
            return
        }
        state.snapshotEntries = UInt64(kept.count)
        state.saved.snapshotsListed = true
        // What other writers appended after this vault last read, and the compaction read: taken
        // as a download would take it before the cursor moves past it — otherwise this vault
        // would never read those changes, which the snapshot now holds behind its cursor.
        let own = Set(((try? DeviceRecord.everyRecord(in: vault)) ?? []).map(\.id))
        var findings = [StoreFinding]()
        for change in page.changes where change.sequence > state.cursor {
            let link = take(change.object, label: "change \(change.sequence)", sequence: change.sequence, own: own, into: &state).link
            if let link, let broken = state.chains.follow(link, digest: ChainPosition.digest(of: change.object)),
               let finding = finding(broken, link: link, at: change.sequence) {
                findings.append(finding)
            }
        }
        state.cursor = max(state.cursor, page.next)
        state.anchor = .none
        state.unreadable.removeAll()
        storeLink.state = state
        note(findings.filter { !$0.rereads })
    }

    /// The most one store object holds, in bytes of records: well under what the store reads back
    /// (``DirectoryStore``'s object limit), whatever a revision weighs.
    static var objectBudget: Int { objectBudgetHere ?? 768 * 1024 }

    /// ``objectBudget`` for the accounts opened within one task (a test making a snapshot of many
    /// parts from a few passkeys).
    @TaskLocal package static var objectBudgetHere: Int?

    /// A writer keeps the store in step: it uploads from the queue every revision that has landed
    /// by now and is not in the store yet (never a device-bound passkey's, nor one a later
    /// revision of the same device has already superseded in landing), keeps what other vaults'
    /// devices made as replica records, compacts the store when it is due, and commits its cursor
    /// and queue. A reader writes nothing: what it computes does not depend on the store's copy.
    ///
    /// `readingFirst`: what other writers appended since this process last looked is read first.
    /// A change's own sync (``commitChange(_:)``) does not: its request read the store as it began
    /// (``readStoreForRequest()``), and what another writer appended since shows in the numbers
    /// the store gives its uploads, which are then read — so a sign-in reads the store once.
    func sync(readingFirst: Bool = true) throws(VaultError) {
        guard storeInUse else { return }
        defer { storeLink.state?.readFromStart = false }
        // What other writers appended since this process last looked (a long-lived account: a
        // scenario, a server). A reader only reads.
        if storeLink.state != nil, readingFirst {
            do throws(StoreError) { try readStore() } catch { setStoreAside(error) }
        }
        guard vault.access == .write else { return }
        notingStoreWrite()
        useStore()
        let saved = try storeLink.savedSyncState(in: vault) ?? SyncState()
        guard storeLink.state != nil else {
            // Set aside: the queue waits for the store to come back.
            if saved.version == 0 { try vault.commit([saved.record()]) }
            return
        }
        // The store's repair request answered, and one asked for when this vault found a loss only
        // the other vaults can give back (StoreRepairs.swift).
        do throws(StoreError) {
            if Self.storeChecks, let answered = storeLink.state?.answered {
                let now = try answerAndAskRepairs(answered: answered)
                storeLink.state?.answered = now
            }
        } catch {
            setStoreAside(error)
            return
        }
        guard var state = storeLink.state else { return }
        var queue = saved.queue
        // Read from the start, the store was found to lack nothing of this vault's.
        var lacksNothing = false
        if state.rebuilding {
            // Everything of this vault's the store lacks: found by a scan, once per store (and
            // each time the store is read again from the start).
            let queued = Set(queue.map(\.revisionId))
            let lacking = try vault.unorderedRecords(kind: .credential).compactMap { record -> SyncState.Upload? in
                guard StoreReplica.revisionRecord(record) == nil, state.landed[record.id] == nil, !queued.contains(record.id),
                      let rp = record.field(CredentialRecord.Tag.rpId) else { return nil }
                return SyncState.Upload(revisionId: record.id, rpId: Array(rp), landsAt: nil,
                                        userHandle: record.field(CredentialRecord.Tag.userHandle).map(Array.init))
            }
            queue += lacking
            lacksNothing = lacking.isEmpty
            state.rebuilding = false
        }
        let (due, waiting) = try dueUploads(queue, landed: state.landed, beforeLanding: !devicesElsewhere.isEmpty)
        var (stored, tooLarge) = try upload(due)
        // Deletions the store went back to before: restated, and kept here again as revisions (a
        // deletion collected here is not collected any more, until every device has this one).
        let restated = restatedDeletions(&state)
        let devices = Set(try DeviceRecord.everyRecord(in: vault).map(\.id))
        let restatedHere = restated.map { r in
            devices.contains(r.revision.originId) ? r.record : StoreReplica.record(of: r.record, landedAt: r.landedAt)
        }
        for r in restated { state.collected[r.revision.itemId] = nil }
        stored += restated
        state.tooLarge = tooLarge
        // A revision too large for one object is never uploaded (no reader could read it back):
        // it stays in the vault, and in the queue, and sync status says so.
        queue = waiting + due.filter { tooLarge.contains($0.0.id) }.map { r, landed in
            SyncState.Upload(revisionId: r.id, rpId: Array(r.credential.rpId.utf8), landsAt: landed, userHandle: r.credential.userHandle)
        }
        storeLink.state = state
        do throws(StoreError) {
            let uploads = chained(stored.map { (record: $0.record, landedAt: $0.landedAt) }, in: state)
            if !uploads.isEmpty {
                let given = try state.store.append(uploads.map(\.object))
                var entries = stored.makeIterator()
                for (upload, sequence) in zip(uploads, given) {
                    for _ in upload.entries {
                        guard let entry = entries.next() else { break }
                        state.landed[entry.record.id] = entry.landedAt
                        state.sequences[entry.record.id] = sequence
                        state.uploadIndex[entry.record.id] = upload.position.index
                        state.read.append(.init(sequence: sequence, revision: entry.revision, landedAt: entry.landedAt,
                                                requirement: [vault.vaultId: upload.position.index]))
                    }
                }
                let last = uploads[uploads.count - 1].position
                state.ownHead = last
                state.chains.heads[vault.vaultId] = last
                let contiguous = given.elementsEqual((0..<UInt64(given.count)).map { state.cursor + 1 + $0 })
                if contiguous {
                    state.cursor += UInt64(given.count)
                    state.anchor = ChainAnchor(sequence: state.cursor, digest: last.digest)
                }
                storeLink.state = state
                // Another writer of the store appended meanwhile: read what it did.
                if !contiguous { note(try download()) }
                // What the store had lost of this vault's is in it again.
                heal { $0.remedy == .reupload }
            } else if lacksNothing {
                // A gap in this vault's chain whose uploads were given again since (a later one
                // restates them; the gap stays in the log until a compaction replaces it), found
                // again reading from the start: nothing of this vault's is lost.
                heal { $0.remedy == .reupload }
            }
        } catch {
            setStoreAside(error)
            return  // what was not uploaded stays queued for the store's return
        }
        state = storeLink.state ?? state
        var updated = saved
        updated.storeId = state.saved.storeId
        updated.cursor = state.cursor
        updated.queue = queue
        updated.unreadable = state.unreadable
        updated.chains = state.chains
        updated.ownHead = state.ownHead
        updated.anchor = state.anchor
        updated.repairAnswered = state.answered
        // What every device has acknowledged, published; what it allows, collected (StoreKnowledge.swift).
        // A store that fails now has still been read and written: what this sync did is committed.
        let (collected, problem) = try settleKnowledge(&state, into: &updated)
        storeLink.state = state
        if let problem {
            setStoreAside(problem)
        } else {
            heal { $0.remedy == .republish && $0.message.contains("device directory") }
            healAnsweredRepairs(answered: state.answered)
            do throws(StoreError) { try compactStore() } catch { setStoreAside(error) }
            state = storeLink.state ?? state
        }
        updated.snapshotEntries = state.snapshotEntries
        updated.cursor = state.cursor
        updated.anchor = state.anchor
        updated.chains = state.chains
        updated.problems = Self.kept(state.problems)
        updated.snapshotsListed = saved.snapshotsListed || state.saved.snapshotsListed
        let replicas = try replicaRecords(for: state.downloaded[state.persistedDownloads...])
        state.persistedDownloads = state.downloaded.count
        if storeLink.state != nil { storeLink.state = state }
        guard !replicas.isEmpty || !collected.isEmpty || !restatedHere.isEmpty || saved.version == 0 || updated.cursor != saved.cursor || updated.queue != saved.queue
                || updated.storeId != saved.storeId || updated.snapshotEntries != saved.snapshotEntries
                || updated.unreadable.map(\.name) != saved.unreadable.map(\.name) || !updated.sameKnowledge(as: saved)
        else { return }
        if vault.sharing == .held, replicas.isEmpty, collected.isEmpty, restatedHere.isEmpty, saved.version != 0 {
            // A held vault is this process's alone and never reopened: its cursor and queue ride
            // along with the next commit rather than costing one of their own.
            updated.version = saved.version + 1
            storeLink.pendingSyncState = updated
            return
        }
        try vault.commit(collected + replicas + restatedHere + [updated.record()])
        storeLink.pendingSyncState = nil
        storeLink.noteWritten(updated)
    }

    /// The queued uploads that may have landed by now, read from their RPs' partitions, with when
    /// each landed; and the rest, still waiting. A queued revision that is gone (superseded and
    /// collected), device-bound, already in the store, or lost with its device is dropped.
    ///
    /// `beforeLanding`: other vaults share the store, so a revision whose landing time is known is
    /// sent now, with that time, rather than by a command that runs once it has landed: each other
    /// vault's device then receives it at its landing time and its own download delay after, with
    /// nothing left running here (a device offline waits, as its landing time is not known).
    private func dueUploads(_ queue: [SyncState.Upload], landed stored: [[UInt8]: Instant], beforeLanding: Bool)
        throws(VaultError) -> (due: [(Revision, Instant)], waiting: [SyncState.Upload]) {
        let now = beforeLanding ? Instant.endOf(.max) : present
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
    /// partition; none for one this vault already keeps. Whether it keeps one is asked of the
    /// replica's own partition (or shard), not of an RP history: a first sync of 100,000 passkeys
    /// by as many users would otherwise make a history for each user, each looking through its
    /// RP's downloads — a cost that grew with the square of the account.
    private func replicaRecords(for downloaded: ArraySlice<Revision>) throws(VaultError) -> [VaultRecord] {
        var out = [VaultRecord]()
        out.reserveCapacity(downloaded.count)
        var added = Set<[UInt8]>(minimumCapacity: downloaded.count)
        for r in downloaded {
            guard case .store(let landed, let record) = r.source else { continue }
            let replica = StoreReplica.record(of: record, landedAt: landed)
            guard try !vault.holdsRecord(like: replica), added.insert(replica.id).inserted else { continue }
            out.append(replica)
        }
        return out
    }

    /// Adds the uploads of `records` (new revisions of this vault's devices) to the queue, when
    /// the vault follows a store: the sync state record to commit with them, or `nil`.
    func queueing(_ made: [Revision], in history: History) throws(VaultError) -> (record: VaultRecord, state: SyncState, landsNow: Bool)? {
        guard var saved = try storeLink.savedSyncStateToChange(in: vault) else { return nil }
        var landsNow = false
        let beforeLanding = !devicesElsewhere.isEmpty
        for r in made where !history.deviceBound.contains(r.itemId) {
            let lands = history.devices[r.originId].flatMap { landing(of: r.id, from: $0, changedAt: r.changedAt) }
            saved.append(upload: SyncState.Upload(revisionId: r.id, rpId: Array(r.credential.rpId.utf8), landsAt: lands, userHandle: r.credential.userHandle))
            if let lands, lands <= present || beforeLanding { landsNow = true }
        }
        return (saved.record(), saved, landsNow)
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
        if let queued { storeLink.noteWritten(queued.state) }
        // What lands at once uploads at once: the device that made it sends it now, not at its
        // next sync (a device of another vault may be waiting for it); with other vaults sharing
        // the store, so does what lands later (``dueUploads(_:landed:beforeLanding:)``).
        if queued?.landsNow == true, storeLink.state != nil { try sync(readingFirst: false) }
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

    /// `entries` in batches of at most ``objectBudget`` bytes of records each: what one store
    /// object holds.
    private func batches(_ entries: [(record: VaultRecord, landedAt: Instant)]) -> [[(record: VaultRecord, landedAt: Instant)]] {
        var out = [[(record: VaultRecord, landedAt: Instant)]](), batch = [(record: VaultRecord, landedAt: Instant)](), size = 0
        for entry in entries {
            let weight = Self.storeWeight(of: entry.record)
            if size + weight > Self.objectBudget, !batch.isEmpty {  // (a batch holds one revision at least)
                out.append(batch)
                batch = []
                size = 0
            }
            batch.append(entry)
            size += weight
        }
        if !batch.isEmpty { out.append(batch) }
        return out
    }

    /// `entries` sealed as this vault's next uploads, each under a new random id and numbered on
    /// in its chain from what the store holds of it (`state`): the first after what the store was
    /// read to hold of this vault's — when that is less than this vault made, the upload restates
    /// what the store lost. With nothing to upload and something lost, one empty upload restates
    /// it. Returns the objects and their places in the chain, in order.
    private func chained(_ entries: [(record: VaultRecord, landedAt: Instant)], in state: StoreState)
        -> [(object: StoreObject, position: ChainPosition, entries: [(record: VaultRecord, landedAt: Instant)])] {
        var groups = batches(entries)
        var previous = state.chains.head(of: vault.vaultId)
        if groups.isEmpty {
            guard previous.index < state.ownHead.index else { return [] }
            groups = [[]]
        }
        var index = max(state.ownHead.index, previous.index)
        return groups.map { batch in
            index += 1
            // Not from the account's random source: when a writer uploads depends on when it looks
            // (a reader's step in a scenario), and a seeded stream must not depend on that.
            let id = RandomSource.live.bytes(16)
            let link = UploadLink(vault: vault.vaultId, index: index, previous: previous)
            let object = StoreObject(id: id, bytes: StorePack.seal(batch, link: link, name: id, key: settings.accountKey, accountId: settings.accountId))
            previous = ChainPosition(index: index, digest: ChainPosition.digest(of: object))
            return (object, previous, batch)
        }
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
    /// The version of the store's sync settings when they do not open (published again).
    var settingsUnreadable: UInt64?
    /// This vault followed this store before this process opened it (its sync state names it).
    var followedBefore = false
    /// How far this vault has read each vault's chain of uploads (StoreChain.swift).
    var chains: StoreChains
    /// What it had read of them before it started reading the store again from the start, to
    /// compare with what the store gives now.
    var remembered: StoreChains?
    /// This vault's own chain as it made it: the last upload's place.
    var ownHead: ChainPosition
    /// The change at the cursor, as read.
    var anchor: ChainAnchor
    /// The store is being read again from the start (``startOver(rememberingChains:)``), and it
    /// has been, in this sync.
    var startedOver = false
    var readFromStart = false
    /// The store's repair request, as read with the metadata; the one this vault answered last.
    var repair = RepairRequest.Read.none
    var answered: [UInt8]
    /// What this vault found wrong with the store, open and lately healed.
    var problems: [StoreProblem]
    /// Read again from the start: passkeys this vault collected that the store holds alive, and
    /// those whose deletion it holds (``Account/restatedDeletions(_:)``).
    var aliveInStore: [[UInt8]: Revision] = [:]
    var deletionsInStore: Set<[UInt8]> = []
    /// The place in this vault's chain of each revision this process uploaded.
    var uploadIndex: [[UInt8]: UInt64] = [:]
    /// The revisions in ``downloaded``, by id: one read again is not downloaded twice.
    private var downloadedIds: Set<[UInt8]> = []

    /// Room for `count` more revisions read at once (a snapshot's): when each landed, its
    /// sequence, the downloads and their ids — and, for a writer, what it read.
    mutating func reserve(_ count: Int, writer: Bool) {
        landed.reserveCapacity(landed.count + count)
        sequences.reserveCapacity(sequences.count + count)
        downloaded.reserveCapacity(downloaded.count + count)
        downloadedIds.reserveCapacity(downloadedIds.count + count)
        if writer { read.reserveCapacity(read.count + count) }
    }

    mutating func addDownloaded(_ revision: Revision) {
        guard downloadedIds.insert(revision.id).inserted else { return }
        downloadedByRP[revision.credential.rpId, default: []].append(downloaded.count)
        downloaded.append(revision)
    }

    /// Keeps only the downloaded revisions `keep` accepts (the others collected).
    mutating func keepDownloaded(where keep: (Revision) -> Bool) {
        let kept = downloaded.enumerated().filter { keep($0.element) }
        persistedDownloads = kept.filter { $0.offset < persistedDownloads }.count
        downloaded = []
        downloadedByRP = [:]
        downloadedIds = []
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
        cursor = saved.cursor
        unreadable = saved.unreadable
        chains = saved.chains
        ownHead = saved.ownHead
        anchor = saved.anchor
        answered = saved.repairAnswered
        problems = saved.problems
    }

    /// A revision the store gave (or took from this vault) at `sequence`.
    struct ReadRevision {
        let sequence: UInt64
        let revision: Revision
        let landedAt: Instant
        /// What a device must have received to hold it.
        let requirement: SyncState.Requirement
    }

    struct UnreadableObject: Equatable {
        let name: String
        let reason: String
    }
}
