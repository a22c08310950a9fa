@_spi(ByteOrder) import ByteOrder
import KeyVault
import SyncStore
import VirtualAuthenticator

/// What a device does with what it finds wrong in the store: each finding becomes a
/// ``StoreProblem`` this vault keeps and `sync status` lists, and heals what it can — its own
/// uploads the store lost it uploads again, metadata that does not open it publishes again, and
/// what only another vault can give back it asks every vault for (``RepairRequest``). See
/// docs/sync.md, "What the devices check".
struct StoreFinding: Equatable {
    let kind: StoreProblem.Kind
    let message: String
    let remedy: StoreProblem.Remedy
    /// Whose uploads it is about, when a vault's.
    var vault: [UInt8]?
    /// The store sequence it was found at (0: not one): a repair asked at a later head covers it.
    var location: UInt64 = 0
    /// Whether reading the store again from the start may show nothing is lost: its changes
    /// renumbered under the cursor, say.
    var rereads = false

    init(_ kind: StoreProblem.Kind, _ message: String, remedy: StoreProblem.Remedy, vault: [UInt8]? = nil,
         location: UInt64 = 0, rereads: Bool = false) {
        (self.kind, self.message, self.remedy, self.vault, self.location, self.rereads) = (kind, message, remedy, vault, location, rereads)
    }
}

extension Account {
    // MARK: - Reading the account's metadata

    /// Reads the directory, the sync settings and the repair request from the store, in one call.
    /// A settings version this vault has not taken up is taken up now — from this moment, for
    /// transfers that start from now on — by a writer in its settings record, by a reader in
    /// memory; a `sync set` this vault made while the store was down is published first, over what
    /// the store holds. A value that does not open under the account key is a finding, never read
    /// as empty: the directory as this vault last read it stands in for it until it is published again.
    func readAccountMetadata() throws(StoreError) {
        guard var state = storeLink.state else { return }
        let keys = [AccountDirectory.key, PublishedSettings.key, RepairRequest.key]
        let values = try state.store.metadata(keys)
        // The directory as last read: this process's, else the vault's (when it follows this store).
        let previous = state.directory.flatMap { $0.unreadable ? nil : $0 } ?? (state.followedBefore ? accountDirectory : nil)
        var directory = AccountDirectory.read(values[AccountDirectory.key], settings: settings, known: state.directory)
        state.repair = RepairRequest.read(values[RepairRequest.key], settings: settings)
        var findings = [StoreFinding]()
        if !directory.unreadable, !directory.tooNew, let previous, !previous.tooNew {
            // A device never leaves the directory (a removed one stays, marked so): one that did,
            // the directory went back. Kept as last read — nothing is collected past it — and
            // published again.
            let vanished = previous.elsewhere(than: vault.vaultId).filter { d in !directory.devices.contains { $0.id == d.id } }
            if !vanished.isEmpty {
                directory.devices += vanished
                findings.append(StoreFinding(.rolledBack, "the account store's device directory no longer lists \(vanished.map(\.name).joined(separator: ", ")), of another vault, which it did: it went back; the devices are kept as last read, and published again",
                                             remedy: .republish))
            }
        }
        state.directory = directory
        if state.directory?.unreadable == true {
            findings.append(StoreFinding(.metadata, "the account store's device directory does not open under the account key (damaged or planted): the directory this vault read last stands in for it, and is published again",
                                         remedy: .republish))
        }
        if case .unreadable = state.repair {
            findings.append(StoreFinding(.metadata, "the account store's repair request does not open under the account key (damaged or planted): every vault is asked again",
                                         remedy: .repair))
        }
        let published = PublishedSettings.read(values[PublishedSettings.key], settings: settings)
        if published?.unreadable == true {
            findings.append(StoreFinding(.metadata, "the account store's sync settings do not open under the account key (damaged or planted): published again as this vault holds them",
                                         remedy: .republish))
            state.settingsUnreadable = published?.version
        } else {
            state.settingsUnreadable = nil
        }
        storeLink.state = state
        note(findings)
        let saved = (try? storeLink.savedSyncState(in: vault)) ?? nil
        if vault.access == .write, (saved?.settingsToPublish ?? false) || state.settingsUnreadable != nil {
            guard writesAsItReads else { return }  // a look leaves them to the next sync
            let mine = PublishedSettings(settings, at: present)
            let done = try PublishedSettings.publish({ $0 = mine }, base: mine, to: state.store, settings: settings)
            storeLink.state?.settingsUnreadable = nil
            try? recordSettingsPublished(version: done.version)
            heal(where: { $0.remedy == .republish && $0.message.contains("sync settings") })
            return
        }
        if let published, !published.unreadable, published.version < state.settingsVersion {
            // Older than what this vault took up: the store went back. The account's settings are
            // what this vault holds, published again.
            note([StoreFinding(.rolledBack, "the account store's sync settings went back to version \(published.version), before version \(state.settingsVersion) this vault took up: published again as this vault holds them",
                               remedy: .republish)])
            if writesAsItReads {
                let mine = PublishedSettings(settings, at: present)
                let done = try PublishedSettings.publish({ $0 = mine }, base: mine, to: state.store, settings: settings)
                try? recordSettingsPublished(version: done.version)
                heal(where: { $0.remedy == .republish && $0.message.contains("sync settings") })
            }
            return
        }
        guard let published, published.version > state.settingsVersion, let value = published.value else { return }
        do { try takeUp(value) } catch { return }  // a vault that cannot be written says so at its next commit
        // Taken up in memory only by a writer's look: its next sync takes them up into the vault.
        if vault.access == .read || writesAsItReads { storeLink.state?.settingsVersion = published.version }
    }

    // MARK: - Problems

    /// Keeps `findings` as problems of this vault (one already kept, open or lately healed, is not
    /// kept twice), and says each new one on stderr through ``storeLink.warnings``.
    func note(_ findings: [StoreFinding]) {
        guard Self.storeChecks, var state = storeLink.state, !findings.isEmpty else { return }
        let now = self.now
        // Not twice while open; one healed comes back as new, but what was only noted stays noted.
        for f in findings where !state.problems.contains(where: { $0.kind == f.kind && $0.message == f.message && ($0.isOpen || $0.remedy == .noted) }) {
            state.problems.append(StoreProblem(f.kind, f.message, at: now, remedy: f.remedy, location: f.location == 0 ? state.cursor : f.location))
            storeLink.warnings.append(f.message)
        }
        state.problems = Self.kept(state.problems)
        storeLink.warnings = Array(storeLink.warnings.suffix(StoreProblem.openKept))
        storeLink.state = state
    }

    /// Marks healed the open problems `which` selects.
    func heal(where which: (StoreProblem) -> Bool) {
        guard var state = storeLink.state else { return }
        let now = self.now
        for i in state.problems.indices where state.problems[i].isOpen && which(state.problems[i]) { state.problems[i].healedAt = now }
        storeLink.state = state
    }

    /// The problems kept: the newest open ones and the newest healed ones — a store that keeps
    /// misbehaving in new ways cannot make the sync state grow without bound.
    static func kept(_ problems: [StoreProblem]) -> [StoreProblem] {
        let healed = problems.filter { !$0.isOpen }.suffix(StoreProblem.healedKept)
        let open = problems.filter(\.isOpen).suffix(StoreProblem.openKept)
        return problems.filter { healed.contains($0) || open.contains($0) }
    }

    // MARK: - Repair requests

    /// Whether every vault of the account (by the store's directory, removed devices' aside) has
    /// answered repair request `id` — this one by what it answered last.
    func answeredByAll(_ id: [UInt8], in state: StoreState, answered: [UInt8]) -> Bool {
        guard answered == id else { return false }
        let others = (state.directory?.elsewhere(than: vault.vaultId) ?? []).filter { !$0.removed }
        return others.allSatisfy { $0.repaired == id }
    }

    /// The vaults that have not answered repair request `id` yet, by their devices' names.
    func unanswered(_ id: [UInt8], in state: StoreState) -> [String] {
        (state.directory?.elsewhere(than: vault.vaultId) ?? []).filter { !$0.removed && $0.repaired != id }.map(\.name)
    }

    /// Whether the repair request the store holds now covers `problem`: it is the one the problem
    /// was asked with, or one asked for the same loss (by another vault that found it first), or
    /// one asked since it was found, when the store's head was past where it was found — every
    /// vault that answers it reads the store after the loss and gives back what it holds. (A
    /// request the store gives back from before, gone back in time, covers nothing new.)
    func covers(_ request: RepairRequest?, _ problem: StoreProblem) -> Bool {
        guard let request else { return false }
        return request.id == problem.repair || request.findings.contains(RepairRequest.mark(problem.message))
            || (request.askedAt >= problem.detectedAt && request.head >= problem.location)
    }

    /// A writer's part, before it uploads: it asks every vault for what it found lost and only they
    /// can give back, unless the request in the store covers it (a problem whose request was
    /// replaced by one from before, or lost with the store going back in time, is asked for
    /// again), and answers the store's request when it has not yet — reading the store again from
    /// the start, so what the store lacks of its own is uploaded. Returns the request answered.
    func answerAndAskRepairs(answered: [UInt8]) throws(StoreError) -> [UInt8] {
        guard var state = storeLink.state else { return answered }
        let wanted = state.problems.indices.filter {
            state.problems[$0].isOpen && state.problems[$0].remedy == .repair && !covers(state.repair.request, state.problems[$0])
        }
        if !wanted.isEmpty {
            let head = try state.store.extent().head
            var asked = RepairRequest(id: RandomSource.live.bytes(16), vault: vault.vaultId, askedAt: now, head: head,
                                      reason: state.problems[wanted[0]].message)
            asked.findings = Set(wanted.map { RepairRequest.mark(state.problems[$0].message) })
            if try asked.publish(to: state.store, expecting: state.repair.version, settings: settings) {
                state.repair = .request(asked, version: state.repair.version + 1)
            } else {
                // Another vault asked meanwhile: its request is read, and covers what it can.
                state.repair = RepairRequest.read(try state.store.metadata([RepairRequest.key])[RepairRequest.key], settings: settings)
            }
            if state.repair.request?.id == asked.id { for i in wanted { state.problems[i] = state.problems[i].waiting(for: asked.id) } }
            storeLink.state = state
        }
        guard let request = state.repair.request, request.id != answered else { return answered }
        if !state.readFromStart {
            storeLink.state?.startOver(rememberingChains: true)
            try readStore()
        }
        return request.id
    }

    /// Heals the problems the store's repair request covers, once every vault has answered it.
    func healAnsweredRepairs(answered: [UInt8]) {
        guard let state = storeLink.state, let request = state.repair.request, answeredByAll(request.id, in: state, answered: answered) else { return }
        heal { $0.remedy == .repair && covers(request, $0) }
    }

    /// What `sync status` says of the store: why it is set aside, else its open problems (and
    /// what each waits for), the changes it cannot read, the revisions too large to upload.
    var storeProblemSummary: String? {
        if let storeProblem { return storeProblem }
        var parts = [String]()
        if let state = storeLink.state {
            for p in state.problems where p.isOpen {
                var line = p.message
                if p.remedy == .repair, let request = state.repair.request, covers(request, p) {
                    let waiting = unanswered(request.id, in: state)
                    if !waiting.isEmpty {
                        line += " (waiting for the vaults of \(waiting.joined(separator: ", ")) to sync and upload what they hold: 'authctl sync now' there)"
                    }
                }
                parts.append(line)
            }
        }
        if let objects = storeObjectProblem { parts.append(objects) }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }

    /// The store's problems as this vault keeps them, open and lately healed.
    var storeProblems: [StoreProblem] {
        Self.kept(storeLink.state?.problems ?? ((try? storeLink.savedSyncState(in: vault))??.problems ?? []))
    }

    // MARK: - Deletions given back

    /// Passkeys this vault collected that the store, read again from the start, holds alive and
    /// without their deletion (it went back to before it): their deletion restated — a removal
    /// by the device that deleted it, at the moment it did — so a device that reads the store, one
    /// that joins after it went back say, deletes them rather than holding them. The revision's id
    /// comes from the passkey and the deletion alone: every vault that restates it restates one.
    func restatedDeletions(_ state: inout StoreState) -> [(record: VaultRecord, landedAt: Instant, revision: Revision)] {
        defer { state.aliveInStore = [:] }
        guard Self.storeChecks, let first = try? DeviceRecord.everyRecord(in: vault)[0] else { return [] }
        var out = [(record: VaultRecord, landedAt: Instant, revision: Revision)]()
        for (item, alive) in state.aliveInStore.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) })
        where !state.deletionsInStore.contains(item) {
            guard let deletion = state.collected[item] else { continue }
            let content = RevisionContent(credential: alive.credential, itemId: item, deviceId: deletion.deleter,
                                          deviceName: deviceName(id: deletion.deleter), changedAt: Instant(ms: deletion.deletedAt, order: .max),
                                          removed: true, created: .zero, sealedKey: nil, sealedInVault: nil)
            let id = Array(SHA256.hash(Array("AUTHCTL-RESTATED-DELETION".utf8) + item + BigEndianBytes.of(deletion.deletedAt)).prefix(16))
            let record = VaultRecord(id: id, kind: .credential, version: 1, fields: CredentialCodec.encode(content))
            let landed = eventTime
            guard let revision = try? Revision(record, source: .store(landedAt: landed, record: record), firstDevice: first) else { continue }
            out.append((record, landed, revision))
            storeLink.warnings.append("the account store holds again a passkey deleted \(DelayRange.text(milliseconds: now - min(now, deletion.deletedAt))) ago: its deletion is uploaded again")
        }
        return out
    }
}
