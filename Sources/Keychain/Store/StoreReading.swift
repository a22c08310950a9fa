#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import KeyVault
import SyncStore
import VirtualAuthenticator

/// Reading the account store, and checking what it gives against what this vault read before:
/// the store is trusted to keep nothing, so each vault's chain of uploads, each snapshot's list
/// of parts and the change at the cursor are checked, and what is wrong becomes a finding
/// (StoreRepairs.swift) — never silence. See docs/sync.md, "What the devices check".
extension Account {
    /// Whether devices check what the store gives: always, unless `$AUTHCTL_STORE_CHECKS` is `off`
    /// — a switch that exists to show a checker (the partition checker's restore and failover runs)
    /// sees the losses the checks prevent. With it off, a device reads the store as authctl 0.3
    /// and earlier did: nothing is compared, nothing asked for again, nothing reported — a vault
    /// reads the store again from the start only when its cursor is past the store's last change.
    static var storeChecks: Bool { storeChecksHere ?? storeChecksByEnvironment }

    private static let storeChecksByEnvironment: Bool = getenv("AUTHCTL_STORE_CHECKS").map { String(cString: $0) != "off" } ?? true

    /// ``storeChecks`` for the accounts opened within one task (a test of the switch).
    @TaskLocal package static var storeChecksHere: Bool?

    /// Opens the store and reads what changed since this vault's cursor — a writer creates the
    /// store, and replaces one of the first layout (`objects/`) by the current one, which it fills
    /// from the vault; a reader only opens one that exists, and writes nothing. A store that
    /// cannot be used — not a private directory of the user's, unreadable, gone — is set aside
    /// with the reason in ``storeProblem``, as a cloud that is down would be: every device keeps
    /// working from this vault, and what has landed uploads once the store is usable again.
    func useStore() {
        guard storeLink.state == nil, storeLink.problem == nil else { return }
        let writer = vault.access == .write
        let saved = (try? storeLink.savedSyncState(in: vault)) ?? nil
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
            state.followedBefore = saved != nil && saved?.storeId == storeId
            if saved == nil || saved?.storeId != storeId {
                // Not followed yet (or another store): read it from the start, and upload what it
                // lacks of this vault's. Nothing read of another store says anything of this one;
                // what was read of this one before it was forgotten (`sync rebuild`) is compared.
                let forgotten = saved?.storeId.isEmpty == true
                if !forgotten { state.chains = StoreChains() }
                state.saved.storeId = storeId ?? []
                state.startOver(rememberingChains: forgotten)
            }
            storeLink.state = state
            try readStore()
        } catch {
            setStoreAside(error)
        }
    }

    /// Reads the account's metadata and then the changes after the cursor, and checks them. When
    /// the store is not what this vault read before — it went back in time, its changes were
    /// renumbered, an upload it should hold is not where it should be — it is read again from the
    /// start, once, and what is still wrong then is what it lost.
    func readStore() throws(StoreError) {
        // The metadata first: every upload the directory names was appended before it was
        // published, so it is in the changes read after.
        try readAccountMetadata()
        let fromStart = storeLink.state?.startedOver == true
        var findings = try download()
        guard Self.storeChecks else {
            // Unchecked: only a store whose last change is before the cursor is read again.
            if !fromStart, findings.contains(where: \.rereads) {
                storeLink.state?.startOver(rememberingChains: false)
                _ = try download()
            }
            storeLink.state?.startedOver = false
            return
        }
        findings += directoryHeadFindings()
        let known = storeLink.state?.problems ?? []
        let fresh = findings.filter { f in f.rereads && !known.contains { $0.kind == f.kind && $0.message == f.message } }
        if fromStart {
            findings += lostSinceRead()
        } else if !fresh.isEmpty {
            storeLink.state?.startOver(rememberingChains: true)
            let first = findings.first { $0.rereads }
            findings = try download() + directoryHeadFindings() + lostSinceRead()
            // Read from the start, nothing is missing: the store's numbering moved under this
            // vault's cursor, and nothing was lost by it. Else what is missing says it all.
            if findings.isEmpty, let first {
                findings = [StoreFinding(first.kind, first.message + "; read again from the start, nothing is lost", remedy: .noted)]
            }
        }
        if storeLink.state?.startedOver == true { storeLink.state?.readFromStart = true }
        storeLink.state?.startedOver = false
        storeLink.state?.remembered = nil
        note(findings)
    }

    /// Reads the store's changes after the cursor (its snapshot first, when the cursor is older),
    /// checking the change the cursor is at, each upload's place in its vault's chain and the
    /// snapshot's list of parts. What another vault's devices made becomes a downloaded revision (a
    /// writer keeps it as a replica record); what this vault's made says when it landed. A change
    /// that cannot be read back, or does not open under the account key (damaged, another
    /// account's, planted), is passed over — the store is not trusted — and noted for `sync status`.
    func download() throws(StoreError) -> [StoreFinding] {
        guard var state = storeLink.state else { return [] }
        var findings = [StoreFinding]()
        let own = Set(((try? DeviceRecord.everyRecord(in: vault)) ?? []).map(\.id))
        var page: ChangePage
        do throws(StoreError) {
            let anchored = Self.storeChecks && state.anchor.sequence != 0 && state.anchor.sequence == state.cursor
            do throws(StoreError) {
                page = try state.store.allChanges(after: anchored ? state.cursor - 1 : state.cursor)
            } catch {
                // Compacted up to the cursor exactly: nothing before it to check against.
                guard anchored, case .behindSnapshot(let snapshot) = error.kind, snapshot <= state.cursor else { throw error }
                state.anchor = .none
                page = try state.store.allChanges(after: state.cursor)
            }
            if anchored, state.anchor.sequence != 0 {
                let there = page.changes.first { $0.sequence == state.cursor }
                guard let there, ChainPosition.digest(of: there.object) == state.anchor.digest else {
                    storeLink.state = state
                    return [StoreFinding(.rolledBack, "the account store no longer holds change \(state.cursor) as this vault read it (\(there == nil ? "it is gone" : "another change has its number"))",
                                         remedy: .noted, rereads: true)]
                }
                page.changes.removeFirst()
                page.unreadable.removeAll { $0.sequence == state.cursor }
            }
        } catch {
            switch error.kind {
            case .behindSnapshot:
                guard let snapshot = try state.store.snapshot() else { throw error }
                findings += readSnapshot(snapshot, own: own, into: &state)
                page = try state.store.allChanges(after: state.cursor)
            case .invalid:
                let head = try state.store.extent().head
                guard head < state.cursor else { throw error }
                storeLink.state = state
                return [StoreFinding(.rolledBack, "the account store's last change is \(head), before change \(state.cursor) this vault read",
                                     remedy: .noted, rereads: true)]
            default:
                throw error
            }
        }
        for change in page.changes {
            let digest = ChainPosition.digest(of: change.object)
            let link = take(change.object, label: "change \(change.sequence)", sequence: change.sequence, own: own, into: &state).link
            if let link, let broken = state.chains.follow(link, digest: digest) {
                if let finding = finding(broken, link: link, at: change.sequence) { findings.append(finding) }
            }
        }
        state.unreadable += page.unreadable.map { .init(name: "change \($0.sequence)", reason: $0.reason) }
        if let last = page.changes.last, last.sequence == page.next {
            state.anchor = ChainAnchor(sequence: last.sequence, digest: ChainPosition.digest(of: last.object))
        } else if page.next != state.cursor {
            state.anchor = .none
        }
        state.cursor = page.next
        // This vault's own uploads found in the store past what it remembers making (its process
        // was stopped between an upload and its commit): numbered on from there.
        let found = state.chains.head(of: vault.vaultId)
        if found.index > state.ownHead.index { state.ownHead = found }
        storeLink.state = state
        return findings
    }

    /// Reads `snapshot` (this vault's cursor is older): its parts as its list names them, every
    /// vault's chain on from where it reaches. A part missing, altered or added, or a list that
    /// reaches less far in a vault's chain than this vault read before, is a finding.
    private func readSnapshot(_ snapshot: StoreSnapshot, own: Set<[UInt8]>, into state: inout StoreState) -> [StoreFinding] {
        var findings = [StoreFinding]()
        var checked = SnapshotManifest.check(snapshot, key: settings.accountKey, accountId: settings.accountId)
        if !Self.storeChecks { checked.parts = snapshot.parts.filter { !SnapshotManifest.isManifest($0.id) } }
        for problem in checked.problems {
            findings.append(StoreFinding(.snapshot, problem, remedy: .repair, location: snapshot.sequence))
        }
        if checked.manifest == nil {
            // Of an authctl of 0.3 or earlier — unless this vault has read or made a listed one:
            // then the store dropped its list, and what it dropped with it cannot be told.
            findings.append(state.saved.snapshotsListed
                ? StoreFinding(.snapshot, "the snapshot up to change \(snapshot.sequence) lists none of its parts (its list was dropped): nothing in it could be checked",
                               remedy: .repair, location: snapshot.sequence)
                : StoreFinding(.snapshot, "the snapshot up to change \(snapshot.sequence) lists none of its parts (made by an authctl of 0.3 or earlier): read unchecked, and listed at the next compaction",
                               remedy: .noted))
        } else {
            state.saved.snapshotsListed = true
        }
        var requirement = SyncState.Requirement()
        for (vault, head) in checked.manifest?.heads ?? [:] {
            let known = state.chains.head(of: vault)
            if head.index < known.index {
                findings.append(StoreFinding(.rolledBack, "the snapshot up to change \(snapshot.sequence) holds \(uploads(of: vault)) up to number \(head.index); this vault read up to \(known.index)",
                                             remedy: vault == self.vault.vaultId ? .reupload : .repair, vault: vault, location: snapshot.sequence))
            } else {
                if head.index == known.index, head.digest != known.digest {
                    findings.append(StoreFinding(.forked, "the snapshot up to change \(snapshot.sequence) holds another upload number \(head.index) of \(uploads(of: vault)) than this vault read",
                                                 remedy: vault == self.vault.vaultId ? .reupload : .repair, vault: vault, location: snapshot.sequence))
                }
                state.chains.heads[vault] = head
            }
            requirement[vault] = head.index
        }
        // Every part opened first, so the tables of what was read are sized once for the whole
        // snapshot rather than grown through every power of two on the way to its count.
        let opened = checked.parts.map { part in
            StorePack.open(part.bytes, name: part.id, key: settings.accountKey, accountId: settings.accountId)
        }
        state.reserve(opened.reduce(0) { $0 + ($1?.entries.count ?? 0) }, writer: vault.access == .write)
        var entries = 0
        for (index, part) in checked.parts.enumerated() {
            let label = "snapshot \(snapshot.sequence) part \(index)"
            entries += take(part, opened: opened[index], label: label, sequence: snapshot.sequence, own: own, into: &state,
                            requirement: requirement).entries
        }
        state.cursor = snapshot.sequence
        state.anchor = .none
        state.snapshotEntries = UInt64(entries)
        state.unreadable.removeAll()
        return findings
    }

    /// Adds what store object `object` (at `sequence`) holds to `state`, or notes it unreadable;
    /// returns the upload's place in its vault's chain, when it names one, and how many revisions
    /// it holds. A revision of a passkey
    /// already collected is dropped (``droppedIfCollected(_:in:)``). `requirement`: what a device
    /// must have received to hold what it carries (a snapshot part's: the snapshot's heads).
    @discardableResult
    func take(_ object: StoreObject, label: String, sequence: UInt64, own: Set<[UInt8]>, into state: inout StoreState,
              requirement: SyncState.Requirement? = nil) -> (link: UploadLink?, entries: Int) {
        take(object, opened: StorePack.open(object.bytes, name: object.id, key: settings.accountKey, accountId: settings.accountId),
             label: label, sequence: sequence, own: own, into: &state, requirement: requirement)
    }

    /// ``take(_:label:sequence:own:into:requirement:)`` of `object` opened already (`nil`: it
    /// does not open).
    private func take(_ object: StoreObject, opened: StorePack.Opened?, label: String, sequence: UInt64, own: Set<[UInt8]>,
                      into state: inout StoreState, requirement: SyncState.Requirement?) -> (link: UploadLink?, entries: Int) {
        guard let opened, let first = try? DeviceRecord.everyRecord(in: vault)[0]
        else {
            if !SnapshotManifest.isManifest(object.id) {
                state.unreadable.append(.init(name: label, reason: "does not open under the account key (damaged, truncated, or another account's)"))
            }
            return (nil, 0)
        }
        let needs = requirement ?? opened.link.map { [$0.vault: $0.index] } ?? [:]
        for entry in opened.entries where state.landed[entry.record.id] == nil {
            guard let revision = try? Revision(entry.record, source: .store(landedAt: entry.landedAt, record: entry.record), firstDevice: first)
            else { continue }
            guard !droppedIfCollected(revision, in: state) else {
                // A passkey collected, found in the store read again from the start (gone back in
                // time, say): its deletion is restated (``Account/restatedDeletions(_:)``), so no
                // device that joins reads it as alive.
                if state.startedOver {
                    if revision.removed { state.deletionsInStore.insert(revision.itemId) } else { state.aliveInStore[revision.itemId] = revision }
                }
                continue
            }
            state.landed[revision.id] = entry.landedAt
            state.sequences[revision.id] = sequence
            if vault.access == .write {
                state.read.append(.init(sequence: sequence, revision: revision, landedAt: entry.landedAt, requirement: needs))
            }
            if !own.contains(revision.originId) {
                state.addDownloaded(revision)
                noteDownloaded(revision)
            }
        }
        return (opened.link, opened.entries.count)
    }

    /// What the store's directory says the other vaults uploaded, against what this vault read of
    /// them: a vault that published a later upload than the store gives is a finding. (What a vault
    /// published can only lag behind what it uploaded, never run ahead: it publishes after.)
    func directoryHeadFindings() -> [StoreFinding] {
        guard let state = storeLink.state, let directory = state.directory, !directory.unreadable, !directory.tooNew else { return [] }
        var heads = [[UInt8]: ChainPosition]()
        for d in directory.elsewhere(than: vault.vaultId) where d.head.index > (heads[d.vaultId]?.index ?? 0) { heads[d.vaultId] = d.head }
        return heads.sorted { $0.key.lexicographicallyPrecedes($1.key) }.compactMap { vault, head in
            let read = state.chains.head(of: vault)
            guard head.index > read.index else { return nil }
            return StoreFinding(.missing, "\(uploads(of: vault).capitalizedFirst) up to number \(head.index) are in the store's directory, but the store gives them only up to \(read.index)",
                                remedy: .repair, vault: vault, rereads: true)
        }
    }

    /// After reading the store again from the start: what this vault had read before and the store
    /// no longer holds — its own uploads (which it uploads again), or another vault's (which that
    /// vault is asked for).
    private func lostSinceRead() -> [StoreFinding] {
        guard let state = storeLink.state, let remembered = state.remembered else { return [] }
        var findings = [StoreFinding]()
        var before = remembered.heads
        if state.ownHead.index > (before[vault.vaultId]?.index ?? 0) { before[vault.vaultId] = state.ownHead }
        for (vault, head) in before.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            let now = state.chains.head(of: vault)
            let mine = vault == self.vault.vaultId
            if now.index < head.index {
                findings.append(StoreFinding(.rolledBack, "the account store lost \(uploads(of: vault)) numbered \(now.index + 1) to \(head.index), which this vault read or made",
                                             remedy: mine ? .reupload : .repair, vault: vault, location: state.cursor))
            } else if now.index == head.index, now.digest != head.digest {
                findings.append(StoreFinding(.forked, "the account store holds another upload number \(head.index) of \(uploads(of: vault)) than this vault read",
                                             remedy: mine ? .reupload : .repair, vault: vault, location: state.cursor))
            }
        }
        return findings
    }

    /// The finding `broken` makes of upload `link`, read at store sequence `sequence`.
    func finding(_ broken: ChainBreak, link: UploadLink, at sequence: UInt64) -> StoreFinding? {
        // Unchecked, the chains are followed (a vault numbers its own uploads on from them) but not judged.
        guard Self.storeChecks else { return nil }
        let whose = uploads(of: link.vault), mine = link.vault == vault.vaultId
        switch broken {
        case .missing(let range):
            return StoreFinding(.missing, "\(whose.capitalizedFirst) numbered \(range.lowerBound) to \(range.upperBound) are not in the store, though number \(link.index) (change \(sequence)) follows them",
                                remedy: mine ? .reupload : .repair, vault: link.vault, location: sequence, rereads: true)
        case .forked(let index):
            return StoreFinding(.forked, "change \(sequence) is another upload number \(index + (index < link.index ? 1 : 0)) of \(whose) than the one read before",
                                remedy: mine ? .reupload : .repair, vault: link.vault, location: sequence, rereads: true)
        case .replayed(let index):
            // This vault's own upload, read back after another vault's appended before it: no news.
            guard !mine else { return nil }
            return StoreFinding(.replayed, "change \(sequence) gives again upload number \(index) of \(whose), read before: passed over", remedy: .noted)
        case .behind(let index, let read):
            // This vault's own upload of several objects, read back after another vault's appended
            // between: it took the last as its head already.
            guard !mine else { return nil }
            return StoreFinding(.replayed, "change \(sequence) gives upload number \(index) of \(whose) after number \(read): passed over", remedy: .noted)
        }
    }

    /// "the uploads of vault 5be0c1d2 (devices phone, laptop)", for messages.
    func uploads(of vaultId: [UInt8]) -> String {
        if vaultId == vault.vaultId { return "this vault's uploads" }
        let names = (accountDirectory?.devices ?? []).filter { $0.vaultId == vaultId }.map(\.name)
        let hex = Hex.string(vaultId).prefix(8)
        return "the uploads of vault \(hex)" + (names.isEmpty ? "" : " (device\(names.count == 1 ? "" : "s") \(names.joined(separator: ", ")))")
    }
}

extension StoreState {
    /// Reads the store again from the start: what was read of it before is read again (a writer
    /// uploads what the store lacks of its own), what was collected is never forgotten (where its
    /// revisions end in the store is not known any more), and what the vault knew of each chain is
    /// kept apart, to be compared with what the store gives now (`rememberingChains`).
    mutating func startOver(rememberingChains: Bool) {
        if rememberingChains, remembered == nil { remembered = chains }
        startedOver = true
        aliveInStore = [:]
        deletionsInStore = []
        rebuilding = true
        landed = [:]
        sequences = [:]
        cursor = 0
        anchor = .none
        unreadable = []
        chains = StoreChains()
        for item in Array(collected.keys) { collected[item]?.through = .max }
    }
}

extension String {
    var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
}
