import KeyVault
import SyncStore

/// The account's link to its store: the store and what it held when last read, the sync state
/// read from the vault or waiting to be written, when the store was last read, and what was found
/// wrong with it. Only the store writer's work — sync, upload, download, repairs, compaction and
/// knowledge (StoreSync.swift and its neighbours) — changes it; what devices see reads the
/// revisions it downloaded, their landings and its ``generation``, nothing else. See
/// docs/design.md, "Keychain".
final class StoreLink {
    /// The store and what it held when last read (its revisions, and when each landed), once it is
    /// in use; and why it is not used, when it cannot be (``problem``).
    var state: StoreState? {
        didSet {
            if state == nil {
                generation &+= 1
                directoryPlain = nil  // another store's versions start again
            }
        }
    }
    /// Moves each time the store is set aside: what was downloaded from it is forgotten with it
    /// (``RPHistories``).
    private(set) var generation = 0
    /// Why the store is not used (``Account/storeProblem``).
    var problem: String?
    /// What this process found wrong with the store, as it found it (StoreRepairs.swift): each
    /// said once, on stderr by the command line (``Account/storeWarnings``).
    var warnings = [String]()
    /// Changes made to passkeys that another device had already deleted (``DroppedRevision``), in
    /// the order they were made, for a scenario's timeline.
    private(set) var droppedRevisions = [DroppedRevision]()

    /// The directory's unsealed form (sync state tag 12) as last made, by the directory version
    /// it was made from: a sync that finds the directory unchanged does not encode it again.
    var directoryPlain: (version: UInt64, plain: [UInt8])?
    /// A sync state newer than the vault's record, not written yet: a sync of a held vault leaves
    /// its cursor and queue for the next commit to carry (``savedSyncState(in:)``).
    var pendingSyncState: SyncState?
    /// The vault's sync state record as last decoded, with its version (``savedSyncState(in:)``).
    private var decodedSyncState: (version: UInt64, state: SyncState?)?
    /// When each change in flight reaches each device, worked out once (StoreKnowledge.swift).
    let flightArrivals = Account.FlightArrivals()
    /// The vault position when the account was opened (``Account/Elsewhere``, StoreKnowledge.swift).
    let positionAtOpen: UInt64
    /// When the account read the store last, for a request that looks at passkeys
    /// (``Account/readStoreForRequest()``, StoreReads.swift).
    var reads = StoreReads()
    /// The account store in this process's memory, for a throw-away account (a scenario's);
    /// `nil`: the store at ``Account/storePath``.
    let memoryStore: MemoryStore?

    init(positionAtOpen: UInt64, memoryStore: MemoryStore?) {
        self.positionAtOpen = positionAtOpen
        self.memoryStore = memoryStore
    }

    /// The sync state as this account knows it: `vault`'s record, or the newer one a sync of a
    /// held vault left to be written with the next commit (``pendingSyncState``). Whatever writes
    /// the state writes this one's successor, one version on.
    func savedSyncState(in vault: Vault) throws(VaultError) -> SyncState? {
        let stored = try SyncState.storedVersion(in: vault)
        if let pendingSyncState, pendingSyncState.version > stored { return pendingSyncState }
        // Decoded once per version of the record (a version is never written twice with other
        // contents): a sync asks for it several times.
        if let decoded = decodedSyncState, decoded.version == stored { return decoded.state }
        let state = try SyncState.read(in: vault)
        decodedSyncState = (stored, state)
        return state
    }

    /// ``savedSyncState(in:)`` for a writer that changes it and commits it: the decoded form kept
    /// is let go of, so the caller's copy is the only one and grows in place (a dense account's
    /// upload queue of hundreds of entries was otherwise copied whole at each change). The
    /// writer's ``noteWritten(_:)`` keeps the new one; a commit that fails leaves the record to be
    /// decoded again.
    func savedSyncStateToChange(in vault: Vault) throws(VaultError) -> SyncState? {
        let state = try savedSyncState(in: vault)
        decodedSyncState = nil
        return state
    }

    /// `state`'s record was committed: its decoded form is `state` itself, one version on, when
    /// the record carries it exactly (``SyncState/asWritten()``), so the next
    /// ``savedSyncState(in:)`` does not decode it again.
    func noteWritten(_ state: SyncState) {
        decodedSyncState = state.asWritten().map { ($0.version, $0) }
    }

    /// Sets the store aside for `reason`: what was read of it is forgotten (a new ``generation``).
    func setAside(_ reason: String) {
        state = nil
        problem = reason
    }

    /// Forgets the store and why it was not used, for it to be read again from the start.
    func forget() {
        state = nil
        problem = nil
    }

    // MARK: - What the read model and the devices ask of it

    /// When revision `id` landed in the store, as the store said when last read.
    func landing(of id: [UInt8]) -> Instant? { state?.landed[id] }

    /// The revisions downloaded from the store (none while it is not used), in the order read.
    var downloaded: [Revision] { state?.downloaded ?? [] }

    /// The downloaded revisions of RP `rpId`, in the order read.
    func downloaded(ofRP rpId: String) -> [Revision] { state?.downloaded(ofRP: rpId) ?? [] }

    /// The downloaded revisions of the RPs `rpIds`, in the order read.
    func downloaded(ofRPs rpIds: Set<String>) -> [Revision] { state?.downloaded(ofRPs: rpIds) ?? [] }

    /// A change made to a passkey another device had already deleted, for the timeline.
    func noteDropped(_ dropped: DroppedRevision) { droppedRevisions.append(dropped) }
}
