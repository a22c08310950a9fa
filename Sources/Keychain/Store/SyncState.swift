@_spi(ByteOrder) import ByteOrder
import KeyVault

/// This vault's place in the account store, one record (kind 4, docs/vault-format.md): which
/// store it follows (the store's id), how far it has read the store's changes (the cursor), what
/// its devices made that has not been uploaded yet (the upload queue, found from each commit, so a
/// writer never scans the vault for it), the store's changes it could not read, and what it knows
/// of the rest of the account: the store's settings version it took up, the changes its devices
/// have not all received yet, the deletions waiting to be collected and those collected, and the
/// device directory as last read.
struct SyncState: Equatable {
    static let kind = VaultRecord.Kind(rawValue: 4)
    static let recordId = Array("AUTHCTL-SYNCSTAT".utf8)

    enum Tag {
        static let cursor: UInt8 = 1, storeId: UInt8 = 2, queue: UInt8 = 3, snapshotEntries: UInt8 = 4
        static let unreadable: UInt8 = 5, format: UInt8 = 6
        static let settingsVersion: UInt8 = 7, collected: UInt8 = 8, inFlight: UInt8 = 9, pendingDeletions: UInt8 = 10
        static let settingsToPublish: UInt8 = 11, directory: UInt8 = 12, collectedThrough: UInt8 = 13
        /// The user handle of each queued upload, in the queue's order (u16 length ‖ handle; length
        /// 0: not known). Absent, or not one per upload (a record an older authctl rewrote): none known.
        static let queueUsers: UInt8 = 14
        /// The user handle of each deletion of tag 10, in its order, as tag 14 is to tag 3.
        static let pendingDeletionUsers: UInt8 = 15
        /// How far this vault has read each vault's chain of uploads (``StoreChains``): per vault,
        /// vault (16) ‖ index u64 ‖ digest (32).
        static let chains: UInt8 = 16
        /// This vault's own chain as it made it: the newest upload's index u64 ‖ digest (32).
        static let ownHead: UInt8 = 17
        /// The change the cursor is at, as read: sequence u64 ‖ digest (32).
        static let anchor: UInt8 = 18
        /// The repair request this vault answered last (16 bytes).
        static let repairAnswered: UInt8 = 19
        /// What this vault found wrong with the store (``StoreProblem``), open and lately healed.
        static let problems: UInt8 = 20
        /// Per change in flight (tag 9), in its order, what a device must have received to hold it
        /// (``SyncState/Requirement``): count u8 ‖ count × (vault (16) ‖ index u64).
        static let inFlightRequirements: UInt8 = 21
        /// The same per deletion of tag 10.
        static let pendingDeletionRequirements: UInt8 = 22
        /// `1`: this vault has read or made a snapshot that lists its parts; a snapshot that lists
        /// none is then one whose list the store dropped.
        static let snapshotsListed: UInt8 = 23
    }

    /// The record's format: tag 6, absent in records written before it (format 1). A writer
    /// rewrites the whole record from what it read, so one that does not know a newer format would
    /// drop what that format added: a newer format is refused (`tooNew`) instead, at open. Format 2
    /// added tags 7–12 (a format-1 record reads with them empty); format 3 tags 16–22, the chains
    /// and the requirements knowledge is counted by: a record of an older format reads as a store
    /// not followed yet, which the vault reads again from the start.
    static let format: UInt64 = 3

    /// Refuses a vault whose sync state record is of a format newer than ``format``; called as the
    /// vault opens, before anything reads the record or writes.
    static func requireKnownFormat(in vault: Vault) throws(VaultError) {
        guard let record = try vault.records(kind: kind).first(where: { $0.id == recordId }) else { return }
        let found = try record.integer(Tag.format, as: UInt64.self) ?? 1
        guard found <= format else {
            throw VaultError(.tooNew, "the vault's sync state is format \(found), newer than this authctl reads (format \(format)): open it with a newer authctl; nothing was changed")
        }
    }

    /// A revision of this vault waiting to upload: its id, its RP ID (the partition it is read
    /// from), and when it lands, once known (`nil` while its device is offline).
    struct Upload: Equatable {
        let revisionId: [UInt8]
        let rpId: [UInt8]
        let landsAt: Instant?
        /// The passkey's user handle, which names the shard of a split RP its records are in;
        /// `nil`: not known (its RP is read whole).
        var userHandle: [UInt8]? = nil
    }

    /// What a device must have received to hold a change read from the store: per vault, an
    /// upload number — the upload that carried it (one vault), or every vault's head in the
    /// snapshot it was read from. Numbers a vault gives its own uploads never come again, whatever
    /// the store's sequences do (a store rolled back gives them again), so knowledge counted by
    /// them stays true.
    typealias Requirement = [[UInt8]: UInt64]

    /// A deletion of a passkey as the store gave it: the item, the sequence of the change that
    /// carried it, when and by which device it was made, and its RP (the partition its records are in).
    struct Deletion: Equatable {
        let itemId: [UInt8]
        let sequence: UInt64
        let deletedAt: UInt64
        let deleter: [UInt8]
        let rpId: [UInt8]
        /// Of a collected passkey: the store's head when it was collected, read after every
        /// device's acknowledgement — every revision of it is at or before that sequence
        /// (``StoreKnowledge``); `nil`: not known yet (collected by an earlier authctl); `.max`:
        /// collected while the vault followed another store, and never forgotten.
        var through: UInt64? = nil
        /// The passkey's user handle, which names the shard of a split RP its records are in;
        /// `nil`: not known (its RP is read whole). Kept for deletions waiting to be collected.
        var userHandle: [UInt8]? = nil
        /// What every device must have received before it is collected (deletions waiting).
        var requirement: Requirement = [:]
    }

    /// A revision read from the store that some device of this vault has not received yet: the
    /// change's sequence, the revision, when it landed and which device made it.
    struct InFlight: Equatable {
        let sequence: UInt64
        let revisionId: [UInt8]
        let landedAt: Instant
        let origin: [UInt8]
        /// What a device that holds it has received (``Requirement``).
        var requirement: Requirement = [:]
    }

    var version: UInt64 = 0
    var storeId: [UInt8] = []
    var cursor: UInt64 = 0
    /// Any change but ``append(upload:)`` forgets the kept encoding (``queueEncoding``).
    var queue: [Upload] = [] { didSet { keptQueue.encoding = nil } }
    /// The queue as ``record()`` writes it (tags 3 and 14), kept while the only changes are
    /// ``append(upload:)``'s: the queue of a vault no write syncs (a scenario's day, its uploads
    /// landing later) holds every change of the day, and the record is written at each. Not part
    /// of the state's value: two states are equal whether either keeps it or not.
    private var keptQueue = KeptQueue()

    struct KeptQueue: Equatable {
        var encoding: QueueEncoding?
        static func == (a: KeptQueue, b: KeptQueue) -> Bool { true }
    }
    /// How many revisions the last snapshot this vault read or made held: compaction waits for
    /// a share of that many changes, so it costs a constant per change.
    var snapshotEntries: UInt64 = 0
    var unreadable: [StoreState.UnreadableObject] = []
    /// The version of the store's sync settings this vault has taken up (0: none).
    var settingsVersion: UInt64 = 0
    /// Passkeys collected: their revisions are gone, and a revision of one that arrives is dropped.
    var collected: [Deletion] = []
    var inFlight: [InFlight] = []
    /// Deletions read from the store, not collected yet: until every device has acknowledged them.
    var pendingDeletions: [Deletion] = []
    /// A `sync set` made while the store could not be used: published at the next sync.
    var settingsToPublish = false
    /// The account's device directory as last read from the store (its unsealed form), for when the
    /// store cannot be used.
    var directory: [UInt8] = []
    var chains = StoreChains()
    var ownHead = ChainPosition.start
    /// The change at the cursor, as read (sequence 0: none): the store must still hold it there.
    var anchor = ChainAnchor.none
    var repairAnswered: [UInt8] = []
    var problems: [StoreProblem] = []
    var snapshotsListed = false

    /// The version of the sync state record the vault holds (0: none), without reading the rest.
    static func storedVersion(in vault: Vault) throws(VaultError) -> UInt64 {
        try vault.records(kind: kind).first(where: { $0.id == recordId })?.version ?? 0
    }

    static func read(in vault: Vault) throws(VaultError) -> SyncState? {
        guard let record = try vault.records(kind: kind).first(where: { $0.id == recordId }) else { return nil }
        guard (try record.integer(Tag.format, as: UInt64.self) ?? 1) <= format else {
            throw VaultError(.tooNew, "the vault's sync state is of a format newer than this authctl reads: open it with a newer authctl")
        }
        var state = SyncState()
        state.version = record.version
        let format = try record.integer(Tag.format, as: UInt64.self) ?? 1
        // Of an older format: a store not followed yet (read again from the start), with what it
        // collected kept (counted by sequences only, what it knew would not be true after a rollback).
        state.storeId = format < Self.format ? [] : record.field(Tag.storeId).map(Array.init) ?? []
        state.cursor = try record.integer(Tag.cursor, as: UInt64.self) ?? 0
        state.snapshotEntries = try record.integer(Tag.snapshotEntries, as: UInt64.self) ?? 0
        var reader = FieldReader(Array(record.field(Tag.queue) ?? []))
        while !reader.atEnd {
            guard let id = reader.take(16), let rpCount = reader.take(2), let rp = reader.take(Int(BigEndianBytes.integer(rpCount[...]) as UInt16)),
                  let known = reader.take(1), let lands = reader.take(16)
            else { throw VaultError(.corrupted, "the vault's sync state has a damaged upload queue") }
            state.queue.append(Upload(revisionId: id, rpId: rp, landsAt: known == [1] ? Instant(bytes: lands[...]) : nil))
        }
        let handles = Self.handles(record, Tag.queueUsers)
        if handles.count == state.queue.count {
            for i in state.queue.indices { state.queue[i].userHandle = handles[i] }
        }
        var problems = FieldReader(Array(record.field(Tag.unreadable) ?? []))
        while !problems.atEnd {
            guard let nameCount = problems.take(2), let name = problems.take(Int(BigEndianBytes.integer(nameCount[...]) as UInt16)),
                  let reasonCount = problems.take(2), let reason = problems.take(Int(BigEndianBytes.integer(reasonCount[...]) as UInt16))
            else { throw VaultError(.corrupted, "the vault's sync state has a damaged list of store problems") }
            state.unreadable.append(.init(name: String(decoding: name, as: UTF8.self), reason: String(decoding: reason, as: UTF8.self)))
        }
        state.settingsVersion = try record.integer(Tag.settingsVersion, as: UInt64.self) ?? 0
        state.collected = try deletions(record, Tag.collected)
        var throughs = FieldReader(Array(record.field(Tag.collectedThrough) ?? []))
        var throughOf = [[UInt8]: UInt64]()
        while !throughs.atEnd {
            guard let item = throughs.take(16), let through = throughs.take(8)
            else { throw VaultError(.corrupted, "the vault's sync state has a damaged list of collection sequences") }
            throughOf[item] = BigEndianBytes.integer(through[...])
        }
        for i in state.collected.indices { state.collected[i].through = throughOf[state.collected[i].itemId] }
        state.pendingDeletions = try deletions(record, Tag.pendingDeletions)
        let deletionUsers = Self.handles(record, Tag.pendingDeletionUsers)
        if deletionUsers.count == state.pendingDeletions.count {
            for i in state.pendingDeletions.indices { state.pendingDeletions[i].userHandle = deletionUsers[i] }
        }
        var flights = FieldReader(Array(record.field(Tag.inFlight) ?? []))
        while !flights.atEnd {
            guard let sequence = flights.take(8), let id = flights.take(16), let landed = flights.take(16).flatMap({ Instant(bytes: $0) }),
                  let origin = flights.take(16)
            else { throw VaultError(.corrupted, "the vault's sync state has a damaged list of changes in flight") }
            state.inFlight.append(InFlight(sequence: BigEndianBytes.integer(sequence[...]), revisionId: id, landedAt: landed, origin: origin))
        }
        state.settingsToPublish = record.field(Tag.settingsToPublish)?.elementsEqual([1]) ?? false
        state.directory = record.field(Tag.directory).map(Array.init) ?? []
        guard format >= Self.format else {
            state.inFlight = []
            state.pendingDeletions = []
            return state
        }
        var chains = FieldReader(Array(record.field(Tag.chains) ?? []))
        while !chains.atEnd {
            guard let vault = chains.take(16), let head = chains.take(40).flatMap({ ChainPosition(bytes: $0) })
            else { throw VaultError(.corrupted, "the vault's sync state has a damaged list of chains") }
            state.chains.heads[vault] = head
        }
        if let own = record.field(Tag.ownHead) {
            guard let head = ChainPosition(bytes: own) else { throw VaultError(.corrupted, "the vault's sync state has a damaged chain head") }
            state.ownHead = head
        }
        if let anchor = record.field(Tag.anchor) {
            guard let read = ChainAnchor(bytes: anchor) else { throw VaultError(.corrupted, "the vault's sync state has a damaged anchor") }
            state.anchor = read
        }
        state.repairAnswered = record.field(Tag.repairAnswered).map(Array.init) ?? []
        state.snapshotsListed = record.field(Tag.snapshotsListed)?.elementsEqual([1]) ?? false
        state.problems = try StoreProblem.list(Array(record.field(Tag.problems) ?? []))
        let flightNeeds = try Self.requirements(record, Tag.inFlightRequirements)
        if flightNeeds.count == state.inFlight.count { for i in state.inFlight.indices { state.inFlight[i].requirement = flightNeeds[i] } }
        let deletionNeeds = try Self.requirements(record, Tag.pendingDeletionRequirements)
        if deletionNeeds.count == state.pendingDeletions.count {
            for i in state.pendingDeletions.indices { state.pendingDeletions[i].requirement = deletionNeeds[i] }
        }
        return state
    }

    private static func requirements(_ record: VaultRecord, _ tag: UInt8) throws(VaultError) -> [Requirement] {
        var reader = FieldReader(Array(record.field(tag) ?? []))
        var out = [Requirement]()
        while !reader.atEnd {
            guard let count = reader.take(1) else { throw VaultError(.corrupted, "the vault's sync state has a damaged list of requirements") }
            var requirement = Requirement()
            for _ in 0..<Int(count[0]) {
                guard let vault = reader.take(16), let index = reader.take(8)
                else { throw VaultError(.corrupted, "the vault's sync state has a damaged list of requirements") }
                requirement[vault] = BigEndianBytes.integer(index)
            }
            out.append(requirement)
        }
        return out
    }

    private static func bytes(requirements: [Requirement]) -> [UInt8]? {
        guard requirements.contains(where: { !$0.isEmpty }) else { return nil }
        var out = [UInt8]()
        for requirement in requirements {
            let kept = requirement.sorted { $0.key.lexicographicallyPrecedes($1.key) }.prefix(255)
            out.append(UInt8(kept.count))
            for (vault, index) in kept { out += vault + BigEndianBytes.of(index) }
        }
        return out
    }

    private static func deletions(_ record: VaultRecord, _ tag: UInt8) throws(VaultError) -> [Deletion] {
        var reader = FieldReader(Array(record.field(tag) ?? []))
        var out = [Deletion]()
        while !reader.atEnd {
            guard let item = reader.take(16), let sequence = reader.take(8), let at = reader.take(8), let deleter = reader.take(16),
                  let count = reader.take(2), let rp = reader.take(Int(BigEndianBytes.integer(count[...]) as UInt16))
            else { throw VaultError(.corrupted, "the vault's sync state has a damaged list of deletions") }
            out.append(Deletion(itemId: item, sequence: BigEndianBytes.integer(sequence[...]), deletedAt: BigEndianBytes.integer(at[...]),
                                deleter: deleter, rpId: rp))
        }
        return out
    }

    /// A list of user handles (tags 14 and 15): per entry, length u16 ‖ handle (0: not known);
    /// empty when absent or damaged (none known).
    private static func handles(_ record: VaultRecord, _ tag: UInt8) -> [[UInt8]?] {
        var reader = FieldReader(Array(record.field(tag) ?? []))
        var out = [[UInt8]?]()
        while !reader.atEnd {
            guard let count = reader.take(2), let handle = reader.take(Int(BigEndianBytes.integer(count[...]) as UInt16)) else { return [] }
            out.append(handle.isEmpty ? nil : handle)
        }
        return out
    }

    /// The handles of `items` (an upload's, a deletion's) as that list, read off each item where it
    /// is: no array of them made first, two passes (the size, then the bytes).
    private static func bytes<Items: Collection>(handlesOf items: Items, _ handle: (Items.Element) -> [UInt8]?) -> [UInt8]? {
        var size = 0, known = false
        for item in items {
            let count = handle(item)?.count
            size += 2 + (count ?? 0)
            known = known || count != nil
        }
        guard known else { return nil }
        return Self.written(size: size) { out in
            for item in items {
                let h = handle(item)
                out.put(UInt16(h?.count ?? 0))
                if let h { out.put(h) }
            }
        }
    }

    /// The upload queue (tag 3): per upload, id (16) ‖ RP ID length u16 ‖ RP ID ‖ 1 ‖ landing ms
    /// u64 ‖ order u64, or 17 zero bytes when its landing is not known; `nil` when empty. This
    /// record is written at every change, and the queue of a vault no write syncs (a scenario's
    /// day, its uploads landing later) holds every change of the day: written straight into one
    /// buffer of its exact size, each upload costs a few copies, not a dozen generic appends.
    static func bytes(queue: [Upload]) -> [UInt8]? {
        guard !queue.isEmpty else { return nil }
        return Self.written(size: queue.reduce(0) { $0 + 35 + $1.revisionId.count - 16 + $1.rpId.count }) { out in
            for upload in queue {
                out.put(upload.revisionId)
                out.put(UInt16(upload.rpId.count))
                out.put(upload.rpId)
                if let lands = upload.landsAt {
                    out.put(UInt8(1))
                    out.put(lands.ms)
                    out.put(lands.order)
                } else {
                    out.zeros(17)
                }
            }
        }
    }

    /// Adds `upload` at the end of the queue, and to its kept encoding: encoded once in whole
    /// when there is none (the state as read, or after another change), then one upload at a time.
    mutating func append(upload: Upload) {
        var encoding = keptQueue.encoding ?? QueueEncoding(of: queue)
        keptQueue.encoding = nil  // the one reference: the appends below write in place
        queue.append(upload)
        encoding.append(upload)
        keptQueue.encoding = encoding
    }

    /// Tags 3 and 14 of the queue, appended to an upload at a time (``append(upload:)``): the
    /// same bytes as ``bytes(queue:)`` and ``bytes(handlesOf:_:)`` give for the whole queue.
    struct QueueEncoding: Equatable {
        private(set) var uploads = [UInt8]()
        private(set) var handles = [UInt8]()
        private(set) var count = 0
        /// Whether any upload's user handle is known (else tag 14 is absent).
        private(set) var handlesKnown = false

        init(of queue: [Upload]) {
            for upload in queue { append(upload) }
        }

        mutating func append(_ upload: Upload) {
            uploads.append(contentsOf: upload.revisionId)
            SyncState.append(UInt16(upload.rpId.count), to: &uploads)
            uploads.append(contentsOf: upload.rpId)
            if let lands = upload.landsAt {
                uploads.append(1)
                SyncState.append(lands.ms, to: &uploads)
                SyncState.append(lands.order, to: &uploads)
            } else {
                uploads.append(contentsOf: repeatElement(0, count: 17))
            }
            SyncState.append(UInt16(upload.userHandle?.count ?? 0), to: &handles)
            if let handle = upload.userHandle { handles.append(contentsOf: handle) }
            handlesKnown = handlesKnown || upload.userHandle != nil
            count += 1
        }

    }

    /// Writes into a buffer of `size` bytes, front to back (``written(size:_:)``).
    struct BufferWriter {
        private let base: UnsafeMutablePointer<UInt8>
        private let size: Int
        private(set) var count = 0

        fileprivate init(_ base: UnsafeMutablePointer<UInt8>, size: Int) {
            self.base = base
            self.size = size
        }

        mutating func put(_ bytes: [UInt8]) {
            precondition(bytes.count <= size - count, "SyncState.BufferWriter: more bytes than the size given")
            bytes.withUnsafeBufferPointer { source in
                if let from = source.baseAddress, !source.isEmpty { (base + count).initialize(from: from, count: source.count) }
            }
            count += bytes.count
        }

        /// `value` big-endian, as ``BigEndianBytes/of(_:)`` gives it.
        mutating func put<T: FixedWidthInteger>(_ value: T) {
            precondition(MemoryLayout<T>.size <= size - count, "SyncState.BufferWriter: more bytes than the size given")
            withUnsafeBytes(of: value.bigEndian) { raw in
                UnsafeMutableRawPointer(base + count).copyMemory(from: raw.baseAddress!, byteCount: raw.count)
            }
            count += MemoryLayout<T>.size
        }

        mutating func zeros(_ n: Int) {
            precondition(n <= size - count, "SyncState.BufferWriter: more bytes than the size given")
            (base + count).initialize(repeating: 0, count: n)
            count += n
        }
    }

    /// The `size` bytes `write` puts, in one allocation; a size `write` does not fill exactly is a
    /// programming error.
    static func written(size: Int, _ write: (inout BufferWriter) -> Void) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            var writer = BufferWriter(buffer.baseAddress!, size: size)
            write(&writer)
            precondition(writer.count == size, "SyncState.written: \(writer.count) bytes written of \(size)")
            initialized = writer.count
        }
    }

    /// `value` big-endian at the end of `bytes`, as ``BigEndianBytes/of(_:)`` gives it.
    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    private static func bytes(_ deletions: [Deletion]) -> [UInt8]? {
        guard !deletions.isEmpty else { return nil }
        var out = [UInt8]()
        for d in deletions {
            out += d.itemId
            out += BigEndianBytes.of(d.sequence)
            out += BigEndianBytes.of(d.deletedAt)
            out += d.deleter
            out += BigEndianBytes.of(UInt16(d.rpId.count))
            out += d.rpId
        }
        return out
    }

    /// Whether what this state knows of the rest of the account (tags 7–12) is as in `other`.
    func sameKnowledge(as other: SyncState) -> Bool {
        settingsVersion == other.settingsVersion && collected == other.collected && inFlight == other.inFlight
            && pendingDeletions == other.pendingDeletions && settingsToPublish == other.settingsToPublish && directory == other.directory
            && chains == other.chains && ownHead == other.ownHead && anchor == other.anchor && repairAnswered == other.repairAnswered
            && problems == other.problems && snapshotsListed == other.snapshotsListed
    }

    /// This state as ``read(in:)`` gives it back from ``record()`` — one version on — when that
    /// is sure to be exactly this state; `nil` when a part of it the record does not carry as it
    /// is (an empty user handle, a requirement of more than 255 vaults, an id that is not 16
    /// bytes, what only a collected or only a waiting deletion keeps, a store problem, a long
    /// name). A writer keeps it as the record's decoded form (``StoreLink/noteWritten(_:)``): the
    /// next request need not decode again what it has just encoded, which on a dense account
    /// (hundreds of changes in flight and waiting deletions) cost as much as the ceremony.
    func asWritten() -> SyncState? {
        func id(_ bytes: [UInt8]) -> Bool { bytes.count == 16 }
        func handle(_ h: [UInt8]?) -> Bool { h.map { !$0.isEmpty && $0.count <= Int(UInt16.max) } ?? true }
        func requirement(_ r: Requirement) -> Bool { r.count <= 255 && r.keys.allSatisfy(id) }
        guard storeId.isEmpty || id(storeId), problems.isEmpty,
              unreadable.allSatisfy({ $0.name.utf8.count <= 1024 && $0.reason.utf8.count <= 4096 }),
              queue.allSatisfy({ id($0.revisionId) && $0.rpId.count <= Int(UInt16.max) && handle($0.userHandle) }),
              collected.allSatisfy({ id($0.itemId) && id($0.deleter) && $0.rpId.count <= Int(UInt16.max) && $0.userHandle == nil && $0.requirement.isEmpty }),
              Set(collected.map(\.itemId)).count == collected.count,
              pendingDeletions.allSatisfy({ id($0.itemId) && id($0.deleter) && $0.rpId.count <= Int(UInt16.max) && $0.through == nil
                  && handle($0.userHandle) && requirement($0.requirement) }),
              inFlight.allSatisfy({ id($0.revisionId) && id($0.origin) && requirement($0.requirement) }),
              chains.heads.allSatisfy({ id($0.key) && $0.value.digest.count == 32 }),
              ownHead.digest.count == 32 && (ownHead.index != 0 || ownHead == .start),
              anchor.sequence == 0 ? anchor == .none : anchor.digest.count == 32
        else { return nil }
        var written = self
        written.version = version + 1
        return written
    }

    /// The record for this state, one version past the one read.
    func record() -> VaultRecord {
        var record = VaultRecord(id: Self.recordId, kind: Self.kind, version: version + 1)
        record.setInteger(Tag.format, Self.format)
        record.setInteger(Tag.cursor, cursor)
        record.setField(Tag.storeId, storeId)
        record.setInteger(Tag.snapshotEntries, snapshotEntries)
        if let kept = keptQueue.encoding, kept.count == queue.count {
            record.setField(Tag.queue, kept.count == 0 ? nil : kept.uploads)
            record.setField(Tag.queueUsers, kept.handlesKnown ? kept.handles : nil)
        } else {
            record.setField(Tag.queue, Self.bytes(queue: queue))
            record.setField(Tag.queueUsers, Self.bytes(handlesOf: queue) { $0.userHandle })
        }
        var problems = [UInt8]()
        for problem in unreadable {
            let name = Array(problem.name.utf8.prefix(1024)), reason = Array(problem.reason.utf8.prefix(4096))
            problems += BigEndianBytes.of(UInt16(name.count)) + name + BigEndianBytes.of(UInt16(reason.count)) + reason
        }
        record.setField(Tag.unreadable, problems.isEmpty ? nil : problems)
        record.setInteger(Tag.settingsVersion, settingsVersion == 0 ? nil : settingsVersion)
        record.setField(Tag.collected, Self.bytes(collected))
        var throughs = [UInt8]()
        for d in collected { if let through = d.through { throughs += d.itemId + BigEndianBytes.of(through) } }
        record.setField(Tag.collectedThrough, throughs.isEmpty ? nil : throughs)
        record.setField(Tag.pendingDeletions, Self.bytes(pendingDeletions))
        record.setField(Tag.pendingDeletionUsers, Self.bytes(handlesOf: pendingDeletions) { $0.userHandle })
        var flights = [UInt8]()
        flights.reserveCapacity(inFlight.count * 56)
        for f in inFlight {
            Self.append(f.sequence, to: &flights)
            flights.append(contentsOf: f.revisionId)
            Self.append(f.landedAt.ms, to: &flights)
            Self.append(f.landedAt.order, to: &flights)
            flights.append(contentsOf: f.origin)
        }
        record.setField(Tag.inFlight, flights.isEmpty ? nil : flights)
        record.setField(Tag.settingsToPublish, settingsToPublish ? [1] : nil)
        record.setField(Tag.directory, directory.isEmpty ? nil : directory)
        var chained = [UInt8]()
        for (vault, head) in chains.heads.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) { chained += vault + head.bytes }
        record.setField(Tag.chains, chained.isEmpty ? nil : chained)
        record.setField(Tag.ownHead, ownHead.index == 0 ? nil : ownHead.bytes)
        record.setField(Tag.anchor, anchor.sequence == 0 ? nil : anchor.bytes)
        record.setField(Tag.repairAnswered, repairAnswered.isEmpty ? nil : repairAnswered)
        record.setField(Tag.snapshotsListed, snapshotsListed ? [1] : nil)
        record.setField(Tag.problems, self.problems.isEmpty ? nil : StoreProblem.bytes(self.problems))
        record.setField(Tag.inFlightRequirements, Self.bytes(requirements: inFlight.map(\.requirement)))
        record.setField(Tag.pendingDeletionRequirements, Self.bytes(requirements: pendingDeletions.map(\.requirement)))
        return record
    }
}

/// Reads a byte string front to back.
struct FieldReader {
    private let bytes: [UInt8]
    private var offset = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    var atEnd: Bool { offset >= bytes.count }
    mutating func take(_ count: Int) -> [UInt8]? {
        guard count >= 0, bytes.count - offset >= count else { return nil }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }
}
