import Synchronization
import SyncStore

/// When a process reads the account store for what it looks at (docs/sync.md, "When a device
/// syncs"). A device syncs when its account is opened and after each write; a request that only
/// looks — a listing, `sync status`, a ceremony finding its passkeys — reads what other writers
/// stored since, once at its start, and writes nothing. What it shows of changes that landed or
/// arrived since the read is computed from their schedule, never from an upload made in passing.
///
/// A command's process opens the account, does one thing and exits: the read its opening made
/// serves that one request, so a sign-in reads the store once. A process that keeps an account
/// open (a scenario, the server, a test) reads once per later request — unless nothing has been
/// asked of it since it was opened and no account of this process has written to its store since
/// (``Account/storeWritesHere``): another vault's device in the same process, say.
struct StoreReads {
    /// The read at open serves the next request.
    private var openReadServes = false
    /// ``Account/storeWritesHere`` when the account was opened.
    private var writesAtOpen = 0
    /// A look is reading the store: even a writer only reads, and takes up what it read in memory
    /// alone, for its next sync to write (``Account/writesAsItReads``).
    var looking = false

    mutating func readAtOpen(writes: Int) {
        openReadServes = true
        writesAtOpen = writes
    }

    /// Whether a request starting now must read the store, `writes` being the count of writes to
    /// it this process has made so far: not when the read at open serves it. The read at open
    /// serves one request at most.
    mutating func requestMustRead(writes: Int) -> Bool {
        defer { openReadServes = false }
        return !openReadServes || writesAtOpen != writes
    }
}

extension Account {
    /// How many times an account of this process wrote (or may have written) to the store at
    /// each path: a writer's sync, a setting published.
    private static let storeWrites = Mutex([String: Int]())

    /// The writes this process made to the store this account uses (``storeWrites``).
    var storeWritesHere: Int { Self.storeWrites.withLock { $0[storePath] ?? 0 } }

    func notingStoreWrite() {
        let path = storePath
        Self.storeWrites.withLock { $0[path, default: 0] += 1 }
    }

    /// Whether reading the store may write what the reading finds to be due (settings the store
    /// lacks published, settings it holds taken up into the vault): a writer's sync, never a look.
    var writesAsItReads: Bool { vault.access == .write && !storeLink.reads.looking }

    /// The start of a request that looks at passkeys or at sync (a ceremony's lookups, a listing,
    /// `sync status`): what other writers appended to the store since this process last read it
    /// is read — and only read: nothing is uploaded, committed or compacted, so looking leaves the
    /// vault and the store as they were (a writer syncs at open and after its writes). A store
    /// that cannot be read is set aside, as a sync sets it aside.
    func readStoreForRequest() {
        guard storeLink.reads.requestMustRead(writes: storeWritesHere), storeLink.state != nil, storeInUse else { return }
        storeLink.reads.looking = true
        defer { storeLink.reads.looking = false }
        do throws(StoreError) { try readStore() } catch { setStoreAside(error) }
        // A read from the start here is not the one a writer's repair answer counts on (its
        // sync reads again).
        storeLink.state?.readFromStart = false
    }
}
