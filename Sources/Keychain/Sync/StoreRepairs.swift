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
        guard var state = storeState else { return }
        let keys = [AccountDirectory.key, PublishedSettings.key, RepairRequest.key]
        let values = try state.store.metadata(keys)
        state.directory = AccountDirectory.read(values[AccountDirectory.key], settings: settings, known: state.directory)
        state.repair = RepairRequest.read(values[RepairRequest.key], settings: settings)
        var findings = [StoreFinding]()
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
        storeState = state
        note(findings)
        let saved = (try? savedSyncState()) ?? nil
        if vault.access == .write, (saved?.settingsToPublish ?? false) || state.settingsUnreadable != nil {
            let mine = PublishedSettings(settings, at: present)
            let done = try PublishedSettings.publish({ $0 = mine }, base: mine, to: state.store, settings: settings)
            storeState?.settingsUnreadable = nil
            try? recordSettingsPublished(version: done.version)
            heal(where: { $0.kind == .metadata && $0.remedy == .republish && $0.message.contains("sync settings") })
            return
        }
        guard let published, published.version > state.settingsVersion, let value = published.value else { return }
        do { try takeUp(value) } catch { return }  // a vault that cannot be written says so at its next commit
        storeState?.settingsVersion = published.version
    }

    // MARK: - Problems

    /// Keeps `findings` as problems of this vault (one already kept, open or lately healed, is not
    /// kept twice), and says each new one on stderr through ``storeWarnings``.
    func note(_ findings: [StoreFinding]) {
        guard Self.storeChecks, var state = storeState, !findings.isEmpty else { return }
        let now = self.now
        for f in findings where !state.problems.contains(where: { $0.kind == f.kind && $0.message == f.message }) {
            state.problems.append(StoreProblem(f.kind, f.message, at: now, remedy: f.remedy, location: f.location))
            storeWarnings.append(f.message)
        }
        storeState = state
    }

    /// Marks healed the open problems `which` selects.
    func heal(where which: (StoreProblem) -> Bool) {
        guard var state = storeState else { return }
        let now = self.now
        for i in state.problems.indices where state.problems[i].isOpen && which(state.problems[i]) { state.problems[i].healedAt = now }
        storeState = state
    }

    /// The problems kept: every open one, and the newest healed ones.
    static func kept(_ problems: [StoreProblem]) -> [StoreProblem] {
        let healed = problems.filter { !$0.isOpen }.suffix(StoreProblem.healedKept)
        return problems.filter { $0.isOpen || healed.contains($0) }
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

    /// A writer's part, before it uploads: it answers the store's repair request when it has not
    /// yet — reading the store again from the start, so what the store lacks of its own is uploaded
    /// — and asks for one when it found a loss only other vaults can give back, unless the request
    /// in the store was asked after what it found (it covers it). Returns the request answered.
    func answerAndAskRepairs(answered: [UInt8]) throws(StoreError) -> [UInt8] {
        guard var state = storeState else { return answered }
        // A problem waiting for a request the store no longer holds — replaced by a later one, or
        // lost with the store going back in time — is asked for again: nobody answers that one now.
        let current = state.repair.request?.id
        for i in state.problems.indices where state.problems[i].isOpen && !state.problems[i].repair.isEmpty && state.problems[i].repair != current {
            state.problems[i] = state.problems[i].waiting(for: [])
        }
        let wanted = state.problems.indices.filter { state.problems[$0].isOpen && state.problems[$0].remedy == .repair && state.problems[$0].repair.isEmpty }
        if !wanted.isEmpty {
            let location = wanted.map { state.problems[$0].location }.max() ?? 0
            var request = state.repair.request
            if request.map({ $0.head < location }) ?? true {
                let head = try state.store.extent().head
                let asked = RepairRequest(id: RandomSource.live.bytes(16), vault: vault.vaultId, askedAt: now, head: head,
                                          reason: state.problems[wanted[0]].message)
                if try asked.publish(to: state.store, expecting: state.repair.version, settings: settings) {
                    request = asked
                    state.repair = .request(asked, version: state.repair.version + 1)
                } else {
                    state.repair = RepairRequest.read(try state.store.metadata([RepairRequest.key])[RepairRequest.key], settings: settings)
                    request = state.repair.request
                }
            }
            if let request { for i in wanted { state.problems[i] = state.problems[i].waiting(for: request.id) } }
            storeState = state
        }
        guard let request = state.repair.request, request.id != answered else { return answered }
        if !state.readFromStart {
            storeState?.startOver(rememberingChains: true)
            try readStore()
        }
        return request.id
    }

    /// Heals the problems waiting for a repair request every vault has answered.
    func healAnsweredRepairs(answered: [UInt8]) {
        guard let state = storeState else { return }
        let done = Set(state.problems.filter { $0.isOpen && !$0.repair.isEmpty }.map(\.repair).filter {
            answeredByAll($0, in: state, answered: answered)
        })
        heal { done.contains($0.repair) }
    }

    /// What `sync status` says of the store: why it is set aside, else its open problems (and
    /// what each waits for), the changes it cannot read, the revisions too large to upload.
    var storeProblemSummary: String? {
        if let storeProblem { return storeProblem }
        var parts = [String]()
        if let state = storeState {
            for p in state.problems where p.isOpen {
                var line = p.message
                if !p.repair.isEmpty {
                    let waiting = unanswered(p.repair, in: state)
                    if !waiting.isEmpty {
                        line += " (waiting for the vaults of \(waiting.joined(separator: ", ")) to sync and upload what they hold; a device that will never sync again: authctl device remove NAME)"
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
        Self.kept(storeState?.problems ?? ((try? savedSyncState())??.problems ?? []))
    }
}
