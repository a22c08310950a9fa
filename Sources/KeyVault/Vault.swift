#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An encrypted vault directory (see docs/vault-format.md):
///
///     header       the KDF parameters and the vault key, wrapped under the passphrase
///     log.N        append-only frames of generation N; each seals one atomic batch of records
///     commit       which generation is current and how much of it is acknowledged, sealed
///     commit.next  only while the vault key is being replaced (see VaultKeyRotation.swift)
///     writer       flock: held exclusively by a writer for its whole life, so writers take turns
///     lock         flock: held exclusively while a change is written, shared while the log is read
///
/// A reader holds no lock once it has read the log, so it never waits for a writer that is
/// waiting for a person (a PIN prompt); a writer's view cannot change under it, because every
/// other writer waits for it.
public final class Vault {
    public enum Access: Sendable { case read, write }

    /// How long to wait for another process holding the vault, and what to do when the wait
    /// begins (the command line says so on stderr).
    public struct Waiting {
        public var limit: Duration
        public var notice: () -> Void

        public init(limit: Duration = Waiting.defaultLimit, notice: @escaping () -> Void = {}) {
            self.limit = limit
            self.notice = notice
        }

        public static let defaultLimit = Duration.seconds(180)
    }

    static let headerFile = "header", commitFile = "commit", nextCommitFile = "commit.next"
    static let lockFile = "lock", writerLockFile = "writer"
    /// The largest log read: far beyond a million passkeys, far below what would exhaust memory.
    static let logLimit = 1 << 31

    /// Whether writes are flushed to disk before they count (see ``Durability``).
    package enum Durability: Sendable {
        /// Every write is flushed (`fsync`) before the next step relies on it: a crash loses
        /// nothing committed. Every vault opened by ``open(at:passphrase:access:waiting:partitioning:)``.
        case full
        /// Nothing is flushed: a crash may lose or tear any of it. Only for a vault made by
        /// ``create(at:passphrase:kdf:waiting:partitioning:durability:initialRecords:)`` and deleted
        /// when its process is done with it (a scenario's); it is not kept with the vault, so
        /// opening the same directory again is durable.
        case none
    }

    /// Whether other processes may use the vault while this one has it open.
    package enum Sharing: Sendable {
        /// Other processes take turns with this one: each change takes the state lock, checks that
        /// `commit` is still the one this process last read or wrote, and replaces it by a new file
        /// and a rename, so a reader sees the old pointer or the new one. Every vault opened by
        /// ``open(at:passphrase:access:waiting:partitioning:)``.
        case shared
        /// Held by this process alone from creation until the `Vault` is released: both locks are
        /// taken once, so any other opener (another `Vault` here, or another process) is refused
        /// as `busy`, and a change neither takes a lock nor reads `commit` back; the log's
        /// descriptor stays open, and the commit pointer is written over in place
        /// (``HeldVaultFiles``). Writing it in place is not atomic, so a crash may leave a vault
        /// that does not open: only for a vault made by
        /// ``create(at:passphrase:kdf:waiting:partitioning:durability:sharing:initialRecords:)``
        /// and deleted by its process, never opened again after a crash (a scenario's). It is not
        /// kept with the vault: what is on disk after each commit is an ordinary vault, and
        /// opening the directory again shares it.
        case held
    }

    package let path: String
    package let access: Access
    package let durability: Durability
    /// `durability` as the file layer takes it.
    var durable: Bool { durability == .full }
    package var sharing: Sharing { held == nil ? .shared : .held }
    /// The locks and descriptors a held vault keeps (``Sharing/held``); `nil`: shared.
    let held: HeldVaultFiles?
    var header: VaultHeader
    var key: SecureBytes
    let waiting: Waiting
    /// A writer's turn, held for its whole life; `nil` for a reader.
    private let writerLock: VaultLock?
    /// The commit file as this process last read or wrote it: a change is refused when the file
    /// on disk is no longer this, rather than written over another process's change.
    var committedPointer: [UInt8] = []
    var generation: UInt64 = 0  // which log file is current; compaction moves to the next
    var frameCount: UInt64 = 0
    var validLength = 0  // bytes of the log that are committed
    var fileLength = 0  // bytes in the log file, committed or not
    var live: [ByteKey: LiveRecord] = [:]
    var nextSequence = 0
    var countByKind: [VaultRecord.Kind: Int] = [:]
    /// The live ids of each kind, so the few records of a small kind are found without a scan.
    var idsByKind: [VaultRecord.Kind: Set<ByteKey>] = [:]
    /// (kind, tag) → field value → ids, built on the first query for that (kind, tag).
    var fieldIndexes: [FieldIndexKey: [ByteKey: [ByteKey]]] = [:]
    /// The records this process may leave unread until asked for (through the index); `nil`:
    /// every record is read at open.
    let partitioning: VaultPartitioning?
    /// The current generation's index, when it was used to open the vault or written since.
    var index: OpenIndex?
    /// What the commit file says of the index (carried into every commit pointer this process
    /// writes, so that a process that does not use the index leaves it named).
    var namedIndex: CommitPointer.IndexName?
    /// Whether the whole log was read and authenticated: at open without an index, or by
    /// ``verify()``.
    var verified = false

    /// Values the caller derived from the records (``derived(_:_:)``): dropped at every change,
    /// unless the value came with a way to follow changes (``derived(_:_:following:)``).
    var derivedValues: [String: DerivedValue] = [:]
    /// How many times a derived value was computed from the records rather than found or followed:
    /// a measure for tests that a value is not recomputed at every change.
    package private(set) var derivations = 0
    /// How many partitions were read from the index's buckets: a measure, for tests, that a lookup
    /// by a partition's field or the lookup field reads one partition, not all of them.
    package internal(set) var partitionsRead = 0

    struct DerivedValue {
        var value: Any
        /// Brings the value up to date with one record that became live (or was removed: a
        /// tombstone); `false` drops it.
        let follow: ((inout Any, VaultRecord) -> Bool)?
    }

    /// A value computed from the live records by `make`, kept until a record changes: for a
    /// caller that reads the same few records on every operation (an account's device records),
    /// so it decodes them once per change rather than once per use.
    package func derived<T>(_ key: String, _ make: () throws(VaultError) -> T) throws(VaultError) -> T {
        if let value = derivedValues[key]?.value as? T { return value }
        let value = try make()
        derivations += 1
        derivedValues[key] = DerivedValue(value: value, follow: nil)
        return value
    }

    /// A value computed from the live records by `make` and kept up to date by `follow`, which
    /// brings it in step with one changed record (a new version, a new id, or a tombstone), or
    /// returns `false` when it cannot (the value is then made afresh when next asked for). A
    /// caller that changes one of N records per operation then pays for one record at each
    /// change, not N.
    package func derived<T>(_ key: String, _ make: () throws(VaultError) -> T,
                           following follow: @escaping (inout T, VaultRecord) -> Bool) throws(VaultError) -> T {
        if let value = derivedValues[key]?.value as? T { return value }
        let value = try make()
        derivations += 1
        derivedValues[key] = DerivedValue(value: value, follow: { any, record in
            guard var typed = any as? T else { return false }
            any = ()  // `typed` is now the only reference: following it does not copy it
            let kept = follow(&typed, record)
            any = typed
            return kept
        })
        return value
    }

    /// Keeps the derived values in step with `record`, now live (or removed): each follows it, or
    /// is dropped.
    func followDerived(_ record: VaultRecord) {
        guard !derivedValues.isEmpty else { return }
        for key in Array(derivedValues.keys) {
            guard var derived = derivedValues.removeValue(forKey: key), let follow = derived.follow,
                  follow(&derived.value, record)
            else { continue }
            derivedValues[key] = derived
        }
    }

    struct LiveRecord {
        var record: VaultRecord
        /// When the id became live: what orders ``records``.
        let sequence: Int
    }

    struct FieldIndexKey: Hashable {
        let kind: VaultRecord.Kind
        let tag: UInt8
    }

    package var vaultId: [UInt8] { header.vaultId }
    package var kdfLimits: (opslimit: UInt64, memlimit: UInt64) { (header.opslimit, header.memlimit) }
    /// Frames in the log: one per committed batch.
    package var committedFrames: UInt64 { frameCount }

    /// Live records (tombstoned ids left out), in the order they became live. Reads every
    /// partition not read yet.
    package var records: [VaultRecord] {
        get throws(VaultError) {
            try readEverything()
            return ordered(live.values)
        }
    }

    package func record(id: [UInt8]) throws(VaultError) -> VaultRecord? {
        if let found = live[ByteKey(id)]?.record { return found }
        guard !everythingRead else { return nil }
        try readEverything()
        return live[ByteKey(id)]?.record
    }

    /// Whether a record with `record`'s id is live, looked for in the partition `record` itself
    /// would be filed in (read first when it was not; no other is): whether a record about to be
    /// added is there already costs its partition, not the vault, nor a sort of the partition. Only
    /// for a record whose id is always filed where its own fields say (a replica of a revision).
    package func holdsRecord(like record: VaultRecord) throws(VaultError) -> Bool {
        if let value = partition(of: record) { try readPartition(value) }
        return live[ByteKey(record.id)] != nil
    }

    /// Live records of one kind, in the order they became live.
    package func records(kind: VaultRecord.Kind) throws(VaultError) -> [VaultRecord] {
        if kind == partitioning?.kind { try readEverything() }
        return ordered((idsByKind[kind] ?? []).compactMap { live[$0] })
    }

    /// Live records of one kind in no particular order: a scan without the sort, for a caller
    /// that keeps only a few of them.
    package func unorderedRecords(kind: VaultRecord.Kind) throws(VaultError) -> [VaultRecord] {
        if kind == partitioning?.kind { try readEverything() }
        return (idsByKind[kind] ?? []).compactMap { live[$0]?.record }
    }

    /// Live records of `kind` whose field `tag` equals `value`, in the order they became live.
    /// The first query for a (kind, tag) builds an index, kept up to date from then on, so finding
    /// the passkeys of one RP among many costs a hash lookup. For the vault's partitioning (kind
    /// and tag), only that partition is read.
    package func records(kind: VaultRecord.Kind, field tag: UInt8, equals value: [UInt8]) throws(VaultError) -> [VaultRecord] {
        if let partitioning, partitioning.kind == kind {
            if partitioning.tag == tag {
                try readPartitions(of: ByteKey(value))
            } else if partitioning.lookup == tag, try readThroughLookup(ByteKey(value)) {
                // one lookup bucket and the partitions it names
            } else {
                try readEverything()
            }
        }
        return inMemory(kind: kind, field: tag, equals: value)
    }

    /// Live records of `kind` whose partition field (``VaultPartitioning/tag``) equals `value` and
    /// whose shard field (``VaultPartitioning/shard``) equals `shardValue`, in the order they
    /// became live: of a split partition only the one shard is read.
    package func records(kind: VaultRecord.Kind, field tag: UInt8, equals value: [UInt8], shard shardValue: [UInt8]) throws(VaultError) -> [VaultRecord] {
        guard let partitioning, partitioning.kind == kind, partitioning.tag == tag, let shard = partitioning.shard else {
            throw VaultError(.inconsistent, "the vault is not partitioned by field \(tag) with shards")
        }
        try readPartition(VaultPartitioning.partition(of: ByteKey(value), shardValue: shardValue, splits: splits))
        return inMemory(kind: kind, field: shard, equals: shardValue).filter { $0.field(tag).map { $0.elementsEqual(value) } ?? false }
    }

    /// The shards of split partition `value` (of `kind`'s partition field `tag`), each with an
    /// upper bound of what ``VaultPartitioning/bound`` gives its live records: the index root's
    /// bound of the shard, raised by the records in memory (the log after the root, this
    /// process's writes). A removal since only makes a bound higher than it need be. `nil` when
    /// the partition is not split, the index keeps no bounds, or every record is in memory.
    package func shardBounds(kind: VaultRecord.Kind, field tag: UInt8, equals value: [UInt8]) -> [[UInt8]]? {
        guard let partitioning, partitioning.kind == kind, partitioning.tag == tag, let shard = partitioning.shard,
              let bound = partitioning.bound, let index, !index.complete else { return nil }
        let base = ByteKey(value)
        guard let count = index.root.splits[base], var bounds = index.root.bounds[base], bounds.count == Int(count) else { return nil }
        for record in inMemory(kind: kind, field: tag, equals: value) {
            let n = Int(VaultPartitioning.shardNumber(of: record.field(shard), count: count))
            bounds[n] = VaultPartitioning.higher(bounds[n], bound(record))
        }
        return bounds
    }

    /// Live records of `kind` whose partition field `tag` equals `value` and which fall in shard
    /// `number` of that split partition, in the order they became live: the one shard is read.
    package func records(kind: VaultRecord.Kind, field tag: UInt8, equals value: [UInt8], shardNumber number: Int) throws(VaultError) -> [VaultRecord] {
        guard let partitioning, partitioning.kind == kind, partitioning.tag == tag, let shard = partitioning.shard,
              let count = splits[ByteKey(value)], number >= 0, number < Int(count) else {
            throw VaultError(.inconsistent, "partition field \(tag) of that value is not split into \(number + 1) shards or more")
        }
        try readPartition(VaultPartitioning.shardKey(ByteKey(value), UInt16(number)))
        return inMemory(kind: kind, field: tag, equals: value).filter {
            Int(VaultPartitioning.shardNumber(of: $0.field(shard), count: count)) == number
        }
    }

    /// The shard of split partition `value` a record with shard field value `shardValue` falls
    /// in; `nil` when the partition is not split.
    package func shardNumber(kind: VaultRecord.Kind, field tag: UInt8, equals value: [UInt8], shard shardValue: [UInt8]) -> Int? {
        guard let partitioning, partitioning.kind == kind, partitioning.tag == tag, partitioning.shard != nil,
              let count = splits[ByteKey(value)] else { return nil }
        return Int(VaultPartitioning.shardNumber(of: shardValue[...], count: count))
    }

    /// Every value field `tag` has among the live records of `kind`, each once, in no particular
    /// order (the RPs of the passkeys, from the field's index): reads every partition not read yet.
    package func fieldValues(kind: VaultRecord.Kind, field tag: UInt8) throws(VaultError) -> [[UInt8]] {
        if kind == partitioning?.kind { try readEverything() }
        let key = buildFieldIndex(kind: kind, tag: tag)
        return (fieldIndexes[key] ?? [:]).compactMap { value, ids in ids.contains { live[$0] != nil } ? Array(value.bytes) : nil }
    }

    /// The records in memory of `kind` whose field `tag` equals `value`, in the order they became
    /// live, through the field's index (built by the first query for it).
    private func inMemory(kind: VaultRecord.Kind, field tag: UInt8, equals value: [UInt8]) -> [VaultRecord] {
        let key = buildFieldIndex(kind: kind, tag: tag)
        return ordered((fieldIndexes[key]?[ByteKey(value[...])] ?? []).compactMap { live[$0] })
    }

    /// The index of field `tag` among the records of `kind`, built from the records in memory the
    /// first time and kept up to date from then on (``updateFieldIndexes(_:adding:)``).
    private func buildFieldIndex(kind: VaultRecord.Kind, tag: UInt8) -> FieldIndexKey {
        let key = FieldIndexKey(kind: kind, tag: tag)
        if fieldIndexes[key] == nil {
            var index = [ByteKey: [ByteKey]]()
            for (id, entry) in live where entry.record.kind == kind {
                if let v = entry.record.field(tag) { index[ByteKey(v), default: []].append(id) }
            }
            fieldIndexes[key] = index
        }
        return key
    }

    /// Adds `record` to (or, `adding` false, takes it out of) every field index kept for its kind.
    /// The keys are taken first: changing `fieldIndexes` while its key view is alive copies the
    /// whole dictionary and then each index it changes, once per record — reading one RP's
    /// partition of 100,000 passkeys took minutes that way.
    func updateFieldIndexes(_ record: VaultRecord, adding: Bool) {
        guard !fieldIndexes.isEmpty else { return }
        let keys = fieldIndexes.keys.filter { $0.kind == record.kind }
        guard !keys.isEmpty else { return }
        let id = ByteKey(record.id)
        for key in keys {
            guard let value = record.field(key.tag) else { continue }
            if adding {
                fieldIndexes[key]![ByteKey(value), default: []].append(id)
            } else {
                fieldIndexes[key]![ByteKey(value)]?.removeAll { $0 == id }
            }
        }
    }

    func ordered(_ entries: some Sequence<LiveRecord>) -> [VaultRecord] {
        entries.sorted { $0.sequence < $1.sequence }.map(\.record)
    }

    init(path: String, access: Access, header: VaultHeader, key: SecureBytes, waiting: Waiting, writerLock: VaultLock?,
         partitioning: VaultPartitioning?, durability: Durability = .full, held: HeldVaultFiles? = nil) {
        self.partitioning = partitioning
        self.held = held
        self.durability = durability
        self.path = path
        self.access = access
        self.header = header
        self.key = key
        self.waiting = waiting
        self.writerLock = writerLock
    }

    static func file(_ dir: String, _ name: String) -> String { dir + "/" + name }
    static func logFile(_ generation: UInt64) -> String { "log.\(generation)" }
    static func indexFile(_ generation: UInt64) -> String { "index.\(generation)" }

    /// The lock that guards the files' contents: exclusive to change them, shared to read them.
    /// `nil` for a held vault, which holds it exclusively already.
    func stateLock(exclusive: Bool) throws(VaultError) -> VaultLock? {
        guard held == nil else { return nil }
        return try VaultLock(path: Self.file(path, Self.lockFile), exclusive: exclusive, wait: waiting.limit, waiting: waiting.notice)
    }

    // MARK: - Create and open

    /// Names a vault directory may hold before its header exists: what an unfinished `create`
    /// leaves behind, which `create` may be run on again.
    static let unfinishedCreation: Set<String> = [
        lockFile, writerLockFile, logFile(0), logFile(0) + ".tmp", indexFile(0), commitFile, commitFile + ".tmp", headerFile + ".tmp",
    ]

    /// Creates a vault in `path`, which must be absent, or an empty directory of this user's.
    /// `initialRecords` (given the new vault, whose key and id exist by then) are committed as the
    /// first frame *before* the header is written, so a vault never exists without them: a crash
    /// during creation leaves an unfinished directory that `create` may be run on again. A create
    /// that fails (a full disk, a file-size limit, initial records refused) leaves nothing of its
    /// own: the files it wrote are removed, and the directories it made, the vault's and its
    /// parents, when nothing else is in them.
    /// `durability` `.none` is for a vault its process deletes when done (see ``Durability``), and
    /// so is `sharing` `.held` (see ``Sharing``).
    package static func create(at path: String, passphrase: SecureBytes, kdf: KDFLevel, waiting: Waiting = Waiting(),
                              partitioning: VaultPartitioning? = nil, durability: Durability = .full, sharing: Sharing = .shared,
                              initialRecords: (Vault) throws(VaultError) -> [VaultRecord] = { _ in [] }) throws(VaultError) -> Vault {
        let durable = durability == .full
        var made = [String]()
        do {
            try POSIXFile.makeDirectory(path, durable: durable, made: &made)
            return try creating(at: path, passphrase: passphrase, kdf: kdf, waiting: waiting, partitioning: partitioning,
                                durability: durability, sharing: sharing, initialRecords: initialRecords)
        } catch {
            // Only the directories this create's own mkdir made, never one that was there (given
            // empty, reached through `..` or a link, or made meanwhile by a racing creator); and
            // rmdir removes only what is empty by now: never one that held anything but what this
            // create wrote (which ``creating`` removed, under the writer lock, before it let go of it).
            for directory in made.reversed() { rmdir(directory) }
            throw error
        }
    }

    private static func creating(at path: String, passphrase: SecureBytes, kdf: KDFLevel, waiting: Waiting, partitioning: VaultPartitioning?,
                                 durability: Durability, sharing: Sharing,
                                 initialRecords: (Vault) throws(VaultError) -> [VaultRecord]) throws(VaultError) -> Vault {
        // Another user's directory, or one holding anything but an unfinished vault, is refused
        // before anything in it changes — its mode included. Then it is made private, and looked
        // at again under the writer lock (for racing creators, and for whatever arrived before the
        // mode changed).
        func refuseExisting() throws(VaultError) {
            // Listed first, the header checked after: a header that appears meanwhile (a racing
            // creator finishing) is a vault that exists, not a stranger in the directory.
            let entries = POSIXFile.entries(path)
            if entries.contains(headerFile) || POSIXFile.exists(file(path, headerFile)) {
                throw VaultError(.exists, "a vault already exists at \(path)")
            }
            let strangers = entries.filter { !unfinishedCreation.contains($0) }
            guard strangers.isEmpty else {
                throw VaultError(.invalid, "\(path) is not empty (\(strangers.sorted().prefix(3).joined(separator: ", "))); choose a new directory for the vault")
            }
        }
        try POSIXFile.requireOwnDirectory(path)
        try refuseExisting()
        try POSIXFile.makePrivate(path)
        let writer = try VaultLock(path: file(path, writerLockFile), exclusive: true, wait: waiting.limit, waiting: waiting.notice)
        try refuseExisting()
        // From here on the directory holds nothing but what an unfinished create leaves, and this
        // one holds the writer lock: what fails removes it all (the writer lock's file last, still
        // held, as ``remove(at:)`` does), so a failed create leaves no vault debris behind.
        do {
            return try writeNew(at: path, passphrase: passphrase, kdf: kdf, waiting: waiting, writer: writer, partitioning: partitioning,
                                durability: durability, sharing: sharing, initialRecords: initialRecords)
        } catch {
            // A header is this create's too (none was there under the lock): one whose rename
            // landed but whose directory could not be flushed.
            for name in unfinishedCreation.union([headerFile]) where name != writerLockFile { unlink(file(path, name)) }
            unlink(file(path, writerLockFile))
            withExtendedLifetime(writer) {}
            throw error
        }
    }

    private static func writeNew(at path: String, passphrase: SecureBytes, kdf: KDFLevel, waiting: Waiting, writer: VaultLock,
                                 partitioning: VaultPartitioning?, durability: Durability, sharing: Sharing,
                                 initialRecords: (Vault) throws(VaultError) -> [VaultRecord]) throws(VaultError) -> Vault {
        let durable = durability == .full
        // A held vault takes the state lock now, for its whole life.
        let held = sharing == .held
            ? HeldVaultFiles(state: try VaultLock(path: file(path, lockFile), exclusive: true, wait: waiting.limit, waiting: waiting.notice))
            : nil
        let salt = Sodium.randomBytes(Sodium.saltBytes)
        let vaultKey = Sodium.randomKey()
        var header = VaultHeader(opslimit: kdf.opslimit, memlimit: kdf.memlimit, salt: salt,
                                 vaultId: Sodium.randomBytes(16), wrappedKey: [])
        let wrapping = try Sodium.deriveKey(from: passphrase, salt: salt, opslimit: kdf.opslimit, memlimit: kdf.memlimit)
        header.wrappedKey = vaultKey.withUnsafeBytes { Sodium.seal($0, key: wrapping, associatedData: header.associatedData) }
        // The empty log and its commit pointer first, then the initial records, the header last: a
        // directory is a vault once its header exists.
        let vault = Vault(path: path, access: .write, header: header, key: vaultKey, waiting: waiting, writerLock: writer,
                          partitioning: partitioning, durability: durability, held: held)
        try vault.writeEmptyLog()
        let initial = try initialRecords(vault)
        if !initial.isEmpty { try vault.commit(initial) }
        try POSIXFile.replaceAtomically(file(path, headerFile), with: header.bytes, directory: path, durable: durable)
        return vault
    }

    /// The first, empty log and its commit pointer, under the exclusive state lock.
    private func writeEmptyLog() throws(VaultError) {
        let state = try stateLock(exclusive: true)
        defer { withExtendedLifetime(state) {} }
        try POSIXFile.replaceAtomically(Self.file(path, Self.logFile(0)), with: [], directory: path, durable: durable)
        try writeCommitPointer(CommitPointer(generation: 0, frameCount: 0, logLength: 0))
    }

    /// Whether `path` holds a vault (its header exists): answered without a passphrase.
    package static func exists(at path: String) -> Bool {
        POSIXFile.exists(file(path, headerFile))
    }

    /// Returns when `path` holds a vault's header; else says why there is none to open. Not seen
    /// is not absent: a directory of another user's (whose header this user may not see) is
    /// `unsafe`, a path that cannot be reached is `io`; only what is not there is `notFound`.
    package static func requirePresent(at path: String) throws(VaultError) {
        guard !exists(at: path) else { return }
        var st = stat()
        if stat(path, &st) != 0 && errno != ENOENT && errno != ENOTDIR {
            throw VaultError(.io, "cannot reach \(path): \(POSIXFile.errorText())")
        }
        if POSIXFile.isDirectory(path) { try POSIXFile.requireOwnDirectory(path) }
        throw VaultError(.notFound, POSIXFile.isDirectory(path) ? "\(path) is not an authctl vault (it has no header file)" : "no vault at \(path)")
    }

    /// Deletes the vault at `path`: the files a vault writes, then the directory if that leaves it
    /// empty. Anything else in the directory is left where it is. For throw-away vaults
    /// (benchmarks, fixtures); no passphrase is asked, so never point it at a vault you keep.
    package static func remove(at path: String) throws(VaultError) {
        try POSIXFile.requirePrivateDirectory(path)
        let writer = try VaultLock(path: file(path, writerLockFile), exclusive: true, wait: .zero)
        let ours = POSIXFile.entries(path).filter { name in
            [headerFile, commitFile, nextCommitFile].contains(name) || name.hasSuffix(".tmp") || isLogFile(name) || isIndexFile(name)
        }
        for name in ours where unlink(file(path, name)) != 0 && errno != ENOENT {
            throw VaultError(.io, "cannot remove \(file(path, name)): \(POSIXFile.errorText())")
        }
        unlink(file(path, lockFile))
        unlink(file(path, writerLockFile))
        withExtendedLifetime(writer) {}
        rmdir(path)  // fails, harmlessly, when something else is still there
    }

    /// `log.N`, N a generation number in decimal: the only log names the vault writes.
    static func isLogFile(_ name: String) -> Bool { isNumbered(name, prefix: "log.") }

    /// `index.N`, N a generation number in decimal: the index of log N.
    static func isIndexFile(_ name: String) -> Bool { isNumbered(name, prefix: "index.") }

    private static func isNumbered(_ name: String, prefix: String) -> Bool {
        guard name.hasPrefix(prefix) else { return false }
        let digits = name.dropFirst(prefix.count)
        return !digits.isEmpty && digits.allSatisfy { ("0"..."9").contains($0) } && String(UInt64(digits) ?? 0) == digits
    }

    /// Opens the vault at `path`: unwraps its key with the passphrase and reads every record. A
    /// writer then holds the writer lock until it is released; a reader holds nothing.
    /// With `partitioning`, the records it names are read through the index, a partition when it
    /// is first asked for, rather than at open.
    package static func open(at path: String, passphrase: SecureBytes, access: Access,
                            waiting: Waiting = Waiting(), partitioning: VaultPartitioning? = nil) throws(VaultError) -> Vault {
        try requirePresent(at: path)
        try POSIXFile.requirePrivateDirectory(path)
        let writer = access == .write
            ? try VaultLock(path: file(path, writerLockFile), exclusive: true, wait: waiting.limit, waiting: waiting.notice) : nil
        let (vault, repairs) = try readUnderStateLock(path, passphrase: passphrase, access: access, waiting: waiting, writer: writer,
                                                      partitioning: partitioning)
        if repairs {
            // A writer tidies, waiting its turn; a reader tidies only if it can at once, and
            // carries on regardless (it may not even be able to write here).
            if access == .write { try vault.tidy(wait: waiting.limit) } else { try? vault.tidy(wait: .zero) }
        }
        return vault
    }

    /// The header, the key it wraps and the log, read under the shared state lock, which is
    /// released when this returns (before any tidying takes it exclusively).
    private static func readUnderStateLock(_ path: String, passphrase: SecureBytes, access: Access, waiting: Waiting,
                                           writer: VaultLock?, partitioning: VaultPartitioning?) throws(VaultError) -> (Vault, Bool) {
        let state = try VaultLock(path: file(path, lockFile), exclusive: false, wait: waiting.limit, waiting: waiting.notice)
        defer { withExtendedLifetime(state) {} }
        let header: VaultHeader
        do {
            // Read more than a version-1 header holds: a newer format's header may be larger, and
            // is reported as too new (its version is checked before its size), not as damage.
            header = try VaultHeader(parsing: try POSIXFile.readAll(file(path, headerFile), limit: VaultHeader.largestRead))
        } catch where error.kind == .notFound {
            throw VaultError(.notFound, "no vault at \(path)")
        }
        let wrapping = try Sodium.deriveKey(from: passphrase, salt: header.salt, opslimit: header.opslimit, memlimit: header.memlimit)
        guard let key = Sodium.open(header.wrappedKey[...], key: wrapping, associatedData: header.associatedData),
              key.count == Sodium.keyBytes
        else { throw VaultError(.locked, "wrong passphrase for the vault at \(path)") }
        let vault = Vault(path: path, access: access, header: header, key: key, waiting: waiting, writerLock: writer,
                          partitioning: partitioning)
        return (vault, try vault.readLog())
    }

    // MARK: - Facts

    /// What the vault can say about itself without opening a secret (`authctl vault info`).
    package struct Facts: Sendable {
        package let formatVersion: UInt16
        package let vaultId: [UInt8]
        package let opslimit: UInt64
        package let memlimit: UInt64
        /// The log's generation: how many times it was compacted.
        package let generation: UInt64
        package let frames: UInt64
        package let committedBytes: Int
        /// Bytes after the committed end of the log: an append that never finished.
        package let uncommittedBytes: Int
        package let liveRecords: [VaultRecord.Kind: Int]
        /// The frames of the log the index covers (`nil`: no index); opening reads the rest.
        package let indexedFrames: UInt64?
        /// Bytes of the index file that count.
        package let indexBytes: UInt64

        /// The vault id in lower-case hexadecimal.
        package var vaultIdHex: String { hex(vaultId) }
    }

    /// Where the vault's history stands: every commit moves it forward, compaction and key
    /// rotation too (a new generation), so positions order writes — the next frame's position is
    /// greater than any record committed so far had.
    package var position: UInt64 { generation << 32 | min(frameCount, UInt64(UInt32.max)) }

    /// Reads every partition not read yet, to count the records.
    package var facts: Facts {
        get throws(VaultError) {
            try readEverything()
            return Facts(formatVersion: VaultHeader.formatVersion, vaultId: header.vaultId, opslimit: header.opslimit,
                         memlimit: header.memlimit, generation: generation, frames: frameCount, committedBytes: validLength,
                         uncommittedBytes: fileLength - validLength,
                         liveRecords: countByKind.filter { $0.value > 0 },
                         indexedFrames: namedIndex != nil ? index?.root.frames : nil, indexBytes: namedIndex?.length ?? 0)
        }
    }

    // MARK: - Secrets inside records

    func secretAssociatedData(_ recordId: [UInt8]) -> [UInt8] {
        Array("AUTHCTL-SECRET".utf8) + header.vaultId + recordId
    }

    /// Seals a secret (a private key) for storage in a field of record `recordId`. Sealed secrets
    /// stay sealed in memory until ``openSecret(_:recordId:)`` is called for the one in use.
    package func sealSecret(_ secret: UnsafeRawBufferPointer, recordId: [UInt8]) -> [UInt8] {
        Sodium.seal(secret, key: key, associatedData: secretAssociatedData(recordId))
    }

    /// Opens a secret sealed by ``sealSecret(_:recordId:)``, into a transient buffer: it is meant
    /// for one operation.
    package func openSecret(_ sealed: [UInt8], recordId: [UInt8]) throws(VaultError) -> SecureBytes {
        guard let plain = Sodium.open(sealed[...], key: key, associatedData: secretAssociatedData(recordId), allocation: .transient) else {
            throw VaultError(.corrupted, "the secret of record \(hex(recordId)) failed authentication")
        }
        return plain
    }
}

func hex(_ bytes: [UInt8]) -> String { Hex.string(bytes) }
