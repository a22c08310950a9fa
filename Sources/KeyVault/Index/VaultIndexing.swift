#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How the vault uses its index (VaultIndex.swift, docs/vault-format.md "Index"): opening reads
/// the root and the log after it; a partition is read from its bucket when first asked for; a
/// writer writes the index again every ``indexRefreshFrames`` frames, appending only the buckets
/// that changed, and writes a new one with every compaction.
extension Vault {
    /// Frames a writer lets the log grow past the index before it writes the index again: what
    /// every open reads beyond the index.
    static let indexRefreshFrames: UInt64 = 16

    /// Frames between index writes that copy `rootRecords` records: ``indexRefreshFrames``, or an
    /// eighth of those records when that is more. Each write copies the whole root (the records
    /// kept outside partitions: settings, devices) and every bucket a change fell in, so a fixed
    /// interval made N changes of a vault with N such records cost N² (adding devices one by one;
    /// registering N passkeys for one RP, whose bucket is written again whole); with the interval
    /// growing with the root and the largest bucket written, a write's cost is spread over as
    /// many frames as it copies records, and an open still reads at most about an eighth of that
    /// again in frames past it.
    static func refreshFrames(rootRecords: Int) -> UInt64 {
        max(indexRefreshFrames, UInt64(rootRecords / 8))
    }

    /// Whether every record is in memory (no index, or every bucket read).
    var everythingRead: Bool { index?.complete ?? true }

    /// The split partitions of the index in use (``VaultPartitioning/shard``).
    var splits: [ByteKey: UInt16] { index?.root.splits ?? [:] }

    /// The partition `record` belongs to in the index in use; `nil`: read at open.
    func partition(of record: VaultRecord) -> ByteKey? { partitioning?.partition(of: record, splits: splits) }

    /// Whether the index splits partition `value` into shards: a record of it found by its lookup
    /// value, or by its shard value (``records(kind:field:equals:shard:)``), costs one shard.
    package func isSplit(_ value: [UInt8]) -> Bool { !splits.isEmpty && splits[ByteKey(value)] != nil }

    // MARK: - Reading

    /// The index the commit file names, with its root read and checked; `nil` when it indexes by
    /// another partitioning than this process's (it is then not used, and a writer replaces it
    /// at its next compaction).
    func openIndex(_ name: CommitPointer.IndexName, of pointer: CommitPointer) throws(VaultError) -> OpenIndex? {
        let indexPath = Self.file(path, Self.indexFile(pointer.generation))
        let fd: Int32
        do { fd = try POSIXFile.openOwned(indexPath, O_RDONLY) } catch where error.kind == .notFound {
            throw VaultError(.corrupted, "the index \(Self.indexFile(pointer.generation)) named by the commit file is missing")
        }
        let size: Int
        do { size = try POSIXFile.size(fd, path: indexPath) } catch { close(fd); throw error }
        guard size <= Self.logLimit else {
            close(fd)
            throw VaultError(.corrupted, "\(indexPath) is \(size) bytes, more than an index can hold (\(Self.logLimit))")
        }
        guard UInt64(size) >= name.length else {
            close(fd)
            throw VaultError(.corrupted, "the index is \(size) bytes but \(name.length) are committed: it was truncated")
        }
        let rootOffset = name.length - UInt64(name.rootLength)
        let sealed: [UInt8]
        do { sealed = try POSIXFile.read(fd, path: indexPath, at: rootOffset, count: Int(name.rootLength)) } catch { close(fd); throw error }
        let aad = VaultIndex.rootAssociatedData(vaultId: header.vaultId, generation: pointer.generation, offset: rootOffset, id: name.rootId)
        guard let plain = Sodium.openNonSecret(sealed[...], key: key, associatedData: aad) else {
            close(fd)
            throw VaultError(.corrupted, "the index root failed authentication: the vault was damaged or tampered with")
        }
        let root: VaultIndex
        do { root = try VaultIndex(rootPlaintext: plain) } catch { close(fd); throw error }
        // (Each bucket's place is checked when it is read.)
        guard root.generation == pointer.generation, root.frames <= pointer.frameCount, root.logLength <= pointer.logLength else {
            close(fd)
            throw VaultError(.corrupted, "the index root does not fit the log the commit file names")
        }
        let opened = OpenIndex(root: root, fd: fd, path: indexPath, name: name)
        // A root that splits nothing serves a partitioning with shard bounds or without alike.
        return root.partitioning == partitioning || (root.splits.isEmpty && root.partitioning == partitioning?.unbounded) ? opened : nil
    }

    /// Makes a record read from the index live, unless the log after the index changed its id:
    /// then the log's version is the live one, and must be the later.
    func insertFromIndex(_ record: VaultRecord, sequence: UInt64) throws(VaultError) {
        let id = ByteKey(record.id)
        if let later = index?.changedSince[id] {
            guard record.version < later.version else {
                throw VaultError(.corrupted, "the log after the index goes back to version \(later.version) of a record the index holds at version \(record.version)")
            }
            // Replaced since, never removed: the live version keeps this one's place.
            if !later.removed, let current = live[id] { live[id] = LiveRecord(record: current.record, sequence: Int(sequence)) }
            return
        }
        guard live[id] == nil else { throw VaultError(.corrupted, "the index holds record \(hex(record.id)) twice") }
        followDerived(record)
        live[id] = LiveRecord(record: record, sequence: Int(sequence))
        countByKind[record.kind, default: 0] += 1
        idsByKind[record.kind, default: []].insert(id)
        updateFieldIndexes(record, adding: true)
    }

    /// Reads every partition holding what has partition value `base`: itself, or its shards.
    func readPartitions(of base: ByteKey) throws(VaultError) {
        guard let index, !index.complete else { return }
        for value in VaultPartitioning.partitions(of: base, splits: index.root.splits) { try readPartition(value) }
    }

    /// Reads partition `value` (a partition value, or a shard of one) from its bucket, once.
    func readPartition(_ value: ByteKey) throws(VaultError) {
        guard let index, !index.complete, !index.loadedPartitions.contains(value) else { return }
        let number = VaultIndex.bucket(of: value, count: index.root.buckets.count)
        let bucket = try index.bucket(number, key: key, vaultId: header.vaultId)
        if let place = bucket.directory[value] {
            try insertPartition(value, place, of: bucket.plain, number: number)
            partitionsRead += 1
        }
        index.loadedPartitions.insert(value)
    }

    /// Reads, through the index's lookup, every partition holding a record whose lookup field
    /// (``VaultPartitioning/lookup``) is `value`: one lookup bucket, then those partitions. What
    /// the log after the index holds is in memory already. `false` when the index has no lookup
    /// (every partition must be read instead).
    func readThroughLookup(_ value: ByteKey) throws(VaultError) -> Bool {
        guard let index, !index.complete else { return true }  // every record is in memory
        guard let table = index.root.lookups, partitioning?.lookup != nil else { return false }
        guard !table.isEmpty else { return true }
        let number = VaultIndex.bucket(of: value, count: table.count)
        for partition in try index.lookupPartitions(of: value, in: number, key: key, vaultId: header.vaultId) {
            try readPartition(partition)
        }
        return true
    }

    /// Reads every partition not read yet.
    func readEverything() throws(VaultError) {
        guard let index, !index.complete else { return }
        for number in index.root.buckets.indices {
            let bucket = try index.bucket(number, key: key, vaultId: header.vaultId)
            for (value, place) in bucket.directory where !index.loadedPartitions.contains(value) {
                guard VaultIndex.bucket(of: value, count: index.root.buckets.count) == number else {
                    throw VaultError(.corrupted, "index bucket \(number) holds a partition of another bucket")
                }
                try insertPartition(value, place, of: bucket.plain, number: number)
                partitionsRead += 1
                index.loadedPartitions.insert(value)
            }
            index.buckets[number] = nil
        }
        // The lookup buckets too: reading every record authenticates every byte of the index in
        // use, so damage to a lookup bucket is found by `list` and `vault check` as elsewhere.
        if let table = index.root.lookups, partitioning?.lookup != nil {
            for number in table.indices where index.lookupBuckets[number] == nil {
                _ = try index.lookupBucket(number, key: key, vaultId: header.vaultId)
                index.lookupBuckets[number] = nil
            }
        }
        index.complete = true
        index.changedSince = [:]
        if !verified { try verifyLog() }
    }

    private func insertPartition(_ value: ByteKey, _ place: (count: Int, range: Range<Int>), of plain: [UInt8], number: Int) throws(VaultError) {
        for (sequence, record) in try VaultIndex.partitionRecords(plain, range: place.range, count: place.count, number: number) {
            guard partition(of: record) == value else {
                throw VaultError(.corrupted, "index bucket \(number) files a record under another partition")
            }
            try insertFromIndex(record, sequence: sequence)
        }
    }

    /// Reads the whole log again, from its first frame to the end this process read, and requires
    /// it to hold exactly the records, versions and order this vault holds through its index.
    /// Opening through the index authenticates only what it reads (the root, the buckets of the
    /// partitions asked for, the log after the index); reading every record runs this too, so
    /// `authctl list`, `vault info` and `vault check`, and every compaction before it drops the
    /// old log, find a changed byte anywhere in the log as opening a vault without an index does.
    /// The log only grows within a generation, so no lock is needed; a compaction by another
    /// process since (the log is gone) is `busy`.
    package func verify() throws(VaultError) {
        try readEverything()
        if !verified { try verifyLog() }
    }

    func verifyLog() throws(VaultError) {
        let whole = Vault(path: path, access: .read, header: header, key: key, waiting: waiting, writerLock: nil, partitioning: nil)
        do {
            try whole.readLog(CommitPointer(generation: generation, frameCount: frameCount, logLength: UInt64(validLength)),
                              checkingPastTheEnd: false)
        } catch where error.kind == .corrupted && !POSIXFile.exists(logPath) {
            throw VaultError(.busy, "the vault at \(path) was compacted by another process while this one read it; run again")
        }
        let mine = ordered(live.values), theirs = ordered(whole.live.values)
        guard mine.count == theirs.count else {
            throw VaultError(.corrupted, "the index and the log after it hold \(mine.count) records; the log read whole holds \(theirs.count)")
        }
        for (a, b) in zip(mine, theirs) where a != b {
            throw VaultError(.corrupted, "the index does not hold what the log holds (record \(hex(b.id)))")
        }
        verified = true
    }

    /// Keeps the index's account of what changed after it: the first later version of each id
    /// (while partitions are unread), and the partitions its next version must write again.
    func noteChange(_ record: VaultRecord, replacing old: VaultRecord?, in index: OpenIndex) {
        let id = ByteKey(record.id)
        if !index.complete {
            let first = index.changedSince[id]?.version ?? record.version
            let removed = (index.changedSince[id]?.removed ?? false) || record.kind == .tombstone
            index.changedSince[id] = (first, removed)
        }
        if index.name.rootLength > 2 * Self.staleRootLimit, partition(of: record) == nil,
           let length = index.alwaysLength(of: id) {
            index.replacedInRoot[id] = length
        }
        guard partitioning != nil else { return }
        let value = partition(of: record), before = old.flatMap(partition(of:))
        if let before { index.changedPartitions?.insert(before) }
        if let value {
            index.changedPartitions?.insert(value)
        } else if before == nil, record.kind == .tombstone, old == nil, !index.complete {
            // The tombstone of a record not read, without its partition: where it was is unknown.
            index.changedPartitions = nil
        }
    }

    /// Before a commit: reads the partitions the changes are in (so that their versions are
    /// checked against what is live), and returns `batches` with each tombstone carrying the
    /// partition field of the record it removes, so a later reader knows which partition changed
    /// without reading it. A tombstone of a record not in memory reads every partition first (a
    /// caller removes what it has seen).
    func preparingCommit(_ batches: [[VaultRecord]]) throws(VaultError) -> [[VaultRecord]] {
        guard let partitioning else { return batches }
        for change in batches.joined() {
            if let value = partition(of: change) { try readPartition(value) }
        }
        var out = batches
        for b in out.indices {
            for r in out[b].indices where out[b][r].kind == .tombstone && out[b][r].field(partitioning.tag) == nil {
                var old = live[ByteKey(out[b][r].id)]?.record
                if old == nil, !everythingRead {
                    try readEverything()
                    old = live[ByteKey(out[b][r].id)]?.record
                }
                // The partition field, and the shard field (a split partition's shard is named by it).
                if let old, old.kind == partitioning.kind, let value = old.field(partitioning.tag) {
                    out[b][r].setField(partitioning.tag, Array(value))
                    if let shard = partitioning.shard, let value = old.field(shard) { out[b][r].setField(shard, Array(value)) }
                }
            }
        }
        return out
    }

    // MARK: - Writing

    /// After a commit, under the exclusive state lock: a writer with a partitioning writes an
    /// index when the generation has none, appends to it once the log has grown
    /// ``indexRefreshFrames`` past it, and compacts (which writes a fresh one) when appending no
    /// longer pays: the file has grown to more than twice what it indexes, a bucket has grown
    /// past eight times its target, or a change could not be placed.
    func maintainIndex() throws(VaultError) {
        // A held vault is never opened again, and its process holds every record in memory: an
        // index would only be written, never read (compaction still writes one with its log).
        guard partitioning != nil, access == .write, held == nil else { return }
        guard let index else {
            if namedIndex != nil {
                try compactLocked()  // an index of another partitioning is named: replaced by a new generation
            } else {
                let written = try writeIndex(generation: generation, frames: frameCount, logLength: UInt64(validLength))
                try writeCommitPointer(CommitPointer(generation: generation, frameCount: frameCount, logLength: UInt64(validLength),
                                                     index: written.name))
                self.index = written
                namedIndex = written.name
            }
            return
        }
        let pending = frameCount - index.root.frames
        // Every open reads the whole root: one whose unpartitioned records were mostly replaced
        // since (a sync state that held a large sync in flight, say) is written again at once,
        // rather than making every open until the next refresh decrypt what no longer counts.
        if pending > 0, index.changedPartitions != nil, rootShrinkage(index) > max(Self.staleRootLimit, Int(index.name.rootLength) / 2) {
            return try appendToIndex(index)
        }
        guard pending >= Self.refreshFrames(rootRecords: index.root.always.count) else { return }
        // A write copies every bucket a changed partition falls in too, and one RP's passkeys are
        // one bucket however many: the interval grows with the largest, so registering N passkeys
        // for one RP costs N, not N². (The largest, not the sum: changes spread over many small
        // buckets keep the interval short, and an open replays few frames.)
        let largest = index.changedPartitions.map { changed in
            Set(changed.map { VaultIndex.bucket(of: $0, count: index.root.buckets.count) })
                .map { Int(index.root.buckets.records(at: $0)) }.max() ?? 0
        } ?? 0
        guard pending >= Self.refreshFrames(rootRecords: index.root.always.count + largest) else { return }
        let buckets = index.root.buckets, lookups = index.root.lookups ?? VaultIndex.BucketTable([])
        let indexed = buckets.indices.reduce(UInt64(index.name.rootLength)) { $0 + UInt64(buckets.length(at: $1)) }
            + lookups.indices.reduce(0) { $0 + UInt64(lookups.length(at: $1)) }
        if index.changedPartitions == nil || index.name.length > 2 * indexed + (1 << 20) || Self.crowded(index.root.buckets)
            || Self.crowded(lookups) {
            try compactLocked()
        } else {
            try appendToIndex(index)
        }
    }

    /// How many bytes a root written now would save over the one the index has: the root's
    /// unpartitioned records that a later version or a removal replaced, less their live versions.
    /// (More than half the root, and the next rewrite is less than half as large: a large record
    /// changing at every commit does not make every commit rewrite it.)
    func rootShrinkage(_ index: OpenIndex) -> Int {
        index.replacedInRoot.reduce(0) { $0 + $1.value - (live[$1.key]?.record.encodedLength ?? 0) }
    }

    /// Below this many stale root bytes an open's extra cost is not worth a write (256 KiB).
    static let staleRootLimit = 256 * 1024

    /// Buckets four times their target on average: the bucket count no longer fits the vault. (The
    /// average, not the largest: one RP's passkeys are one bucket however many, and a compaction
    /// would not make it smaller.)
    static func crowded(_ buckets: VaultIndex.BucketTable) -> Bool {
        let bytes = buckets.indices.reduce(UInt64(0)) { $0 + UInt64(buckets.length(at: $1)) }
        return bytes / UInt64(max(buckets.count, 1)) > UInt64(4 * VaultIndex.bucketTargetBytes)
    }

    /// The records the index keeps in its root, and those of each partition, from memory (which
    /// must hold every record of the partitions asked for), each list in the order its records
    /// became live.
    private func indexContents(partitions wanted: Set<ByteKey>?, splits: [ByteKey: UInt16])
        -> (always: [(sequence: UInt64, record: VaultRecord)], partitions: [ByteKey: [(sequence: UInt64, record: VaultRecord)]]) {
        var always = [(sequence: UInt64, record: VaultRecord)]()
        var partitions = [ByteKey: [(sequence: UInt64, record: VaultRecord)]]()
        for entry in live.values {
            if let value = partitioning?.partition(of: entry.record, splits: splits) {
                if wanted?.contains(value) ?? true { partitions[value, default: []].append((UInt64(entry.sequence), entry.record)) }
            } else {
                always.append((UInt64(entry.sequence), entry.record))
            }
        }
        always.sort { $0.sequence < $1.sequence }
        for key in partitions.keys { partitions[key]!.sort { $0.sequence < $1.sequence } }
        return (always, partitions)
    }

    /// Which partitions a whole index splits, and into how many shards: every partition value
    /// with more than ``VaultPartitioning/splitRecords`` records, into the power of two of shards
    /// that holds some ``VaultPartitioning/shardRecords`` each (all records are in memory).
    private func splitting(_ partitioning: VaultPartitioning) -> [ByteKey: UInt16] {
        guard partitioning.shard != nil else { return [:] }
        var counts = [ByteKey: Int]()
        for entry in live.values {
            if let base = partitioning.base(of: entry.record) { counts[base, default: 0] += 1 }
        }
        var splits = [ByteKey: UInt16]()
        for (base, count) in counts where count > partitioning.splitRecords {
            var shards = 2
            while shards < 1 << 15, shards * partitioning.shardRecords < count { shards *= 2 }
            splits[base] = UInt16(shards)
        }
        return splits
    }

    /// The records partition `value` may hold before a whole index splits it again: a partition
    /// value not split, ``VaultPartitioning/splitRecords``; a shard, four times its target size.
    static func splitLimit(of value: ByteKey, _ partitioning: VaultPartitioning, _ splits: [ByteKey: UInt16]) -> Int {
        let bytes = value.bytes
        if bytes.count >= 3, bytes[bytes.count - 3] == 0xFF, let shards = splits[ByteKey(Array(bytes.dropLast(3)))] {
            return shards >= 1 << 15 ? Int.max : 4 * partitioning.shardRecords
        }
        return partitioning.splitRecords
    }

    /// Split partition and shard number of partition `value`, when it is a shard.
    static func shard(_ value: ByteKey, splits: [ByteKey: UInt16]) -> (base: ByteKey, number: Int)? {
        let bytes = Array(value.bytes)  // (a key read from a bucket is a slice of its plaintext)
        guard bytes.count >= 3, bytes[bytes.count - 3] == 0xFF else { return nil }
        let base = ByteKey(Array(bytes.dropLast(3)))
        let number = Int(bytes[bytes.count - 2]) << 8 | Int(bytes[bytes.count - 1])
        guard let count = splits[base], number < Int(count) else { return nil }
        return (base, number)
    }

    /// Raises each shard's bound in `bounds` to the largest ``VaultPartitioning/bound`` of its
    /// records in `partitions`.
    static func raise(_ bounds: inout [ByteKey: [[UInt8]]], to partitions: [ByteKey: [(sequence: UInt64, record: VaultRecord)]],
                      splits: [ByteKey: UInt16], _ partitioning: VaultPartitioning) {
        guard let bound = partitioning.bound else { return }
        for (value, records) in partitions {
            guard let (base, number) = shard(value, splits: splits), bounds[base] != nil else { continue }
            for (_, record) in records { bounds[base]![number] = VaultPartitioning.higher(bounds[base]![number], bound(record)) }
        }
    }

    /// A sealed lookup bucket at `offset` of the index of `generation`, with the id it is sealed with.
    private func sealedLookup(_ entries: [ByteKey: Set<ByteKey>], number: Int, generation: UInt64, offset: UInt64) -> (sealed: [UInt8], id: [UInt8]) {
        var plain = VaultIndex.lookupPlaintext(entries)
        defer { plain.withUnsafeMutableBytes { sodiumWipe($0) } }
        let id = Sodium.randomBytes(16)
        let aad = VaultIndex.lookupAssociatedData(vaultId: header.vaultId, generation: generation, number: number, offset: offset, id: id)
        return (plain.withUnsafeBytes { Sodium.seal($0, key: key, associatedData: aad) }, id)
    }

    /// A sealed bucket at `offset` of the index of `generation`, with the id it is sealed with.
    private func sealedBucket(_ partitions: [(value: ByteKey, records: [(sequence: UInt64, record: VaultRecord)])], number: Int,
                              generation: UInt64, offset: UInt64) -> (sealed: [UInt8], id: [UInt8]) {
        let sorted = partitions.sorted { $0.value < $1.value }
        var plain = VaultIndex.bucketPlaintext(sorted)
        defer { plain.withUnsafeMutableBytes { sodiumWipe($0) } }
        let id = Sodium.randomBytes(16)
        let aad = VaultIndex.bucketAssociatedData(vaultId: header.vaultId, generation: generation, number: number, offset: offset, id: id)
        return (plain.withUnsafeBytes { Sodium.seal($0, key: key, associatedData: aad) }, id)
    }

    /// A sealed root at `offset`, with the id it is sealed with (which the commit file names).
    private func sealedRoot(_ root: VaultIndex, offset: UInt64) -> (sealed: [UInt8], id: [UInt8]) {
        let id = Sodium.randomBytes(16)
        let aad = VaultIndex.rootAssociatedData(vaultId: header.vaultId, generation: root.generation, offset: offset, id: id)
        return (root.rootPlaintext.withUnsafeBytes { Sodium.seal($0, key: key, associatedData: aad) }, id)
    }

    /// Writes a whole new `index.<generation>` of every live record (all in memory), as of
    /// `frames` frames and `logLength` bytes of that generation's log, flushed; returns it open.
    /// The caller names it in the commit file.
    func writeIndex(generation: UInt64, frames: UInt64, logLength: UInt64) throws(VaultError) -> OpenIndex {
        try readEverything()
        guard let partitioning else { throw VaultError(.inconsistent, "the vault has no partitioning to index by") }
        let splits = splitting(partitioning)
        let (always, partitions) = indexContents(partitions: nil, splits: splits)
        let bytes = partitions.values.reduce(0) { $0 + $1.reduce(0) { $0 + 8 + $1.record.bytes.count } }
        let count = max(1, bytes / VaultIndex.bucketTargetBytes)
        var grouped = [[(value: ByteKey, records: [(sequence: UInt64, record: VaultRecord)])]](repeating: [], count: count)
        for (value, records) in partitions { grouped[VaultIndex.bucket(of: value, count: count)].append((value, records)) }
        var file = [UInt8]()
        var buckets = [VaultIndex.Bucket]()
        for (number, group) in grouped.enumerated() {
            let (sealed, id) = sealedBucket(group, number: number, generation: generation, offset: UInt64(file.count))
            buckets.append(VaultIndex.Bucket(offset: UInt64(file.count), length: UInt32(sealed.count),
                                             records: UInt32(group.reduce(0) { $0 + $1.records.count }), id: id))
            file += sealed
        }
        var lookups: VaultIndex.BucketTable? = nil
        if partitioning.lookup != nil {
            var entries = [ByteKey: Set<ByteKey>]()
            var size = 0
            for entry in live.values {
                guard let (value, partition) = partitioning.lookupEntry(of: entry.record, splits: splits) else { continue }
                if entries[value, default: []].insert(partition).inserted { size += 8 + value.bytes.count + partition.bytes.count }
            }
            let count = max(1, size / VaultIndex.bucketTargetBytes)
            var grouped = [[ByteKey: Set<ByteKey>]](repeating: [:], count: count)
            for (value, partitions) in entries { grouped[VaultIndex.bucket(of: value, count: count)][value] = partitions }
            var table = [VaultIndex.Bucket]()
            for (number, group) in grouped.enumerated() {
                let (sealed, id) = sealedLookup(group, number: number, generation: generation, offset: UInt64(file.count))
                table.append(VaultIndex.Bucket(offset: UInt64(file.count), length: UInt32(sealed.count),
                                               records: UInt32(group.values.reduce(0) { $0 + $1.count }), id: id))
                file += sealed
            }
            lookups = VaultIndex.BucketTable(table)
        }
        var bounds = [ByteKey: [[UInt8]]]()
        let none = [UInt8](repeating: 0, count: VaultPartitioning.boundSize)
        if partitioning.bound != nil { for (base, count) in splits { bounds[base] = Array(repeating: none, count: Int(count)) } }
        Self.raise(&bounds, to: partitions, splits: splits, partitioning)
        let root = VaultIndex(generation: generation, frames: frames, logLength: logLength, nextSequence: UInt64(nextSequence),
                              partitioning: partitioning, buckets: VaultIndex.BucketTable(buckets), always: always, lookups: lookups,
                              splits: splits, bounds: bounds)
        let (sealedRoot, rootId) = sealedRoot(root, offset: UInt64(file.count))
        file += sealedRoot
        let indexPath = Self.file(path, Self.indexFile(generation))
        try POSIXFile.writeNew(indexPath, file, durable: durable)
        let fd = try POSIXFile.openOwned(indexPath, O_RDONLY)
        let opened = OpenIndex(root: root, fd: fd, path: indexPath,
                               name: CommitPointer.IndexName(length: UInt64(file.count), rootLength: UInt32(sealedRoot.count),
                                                             rootId: rootId))
        opened.complete = true
        return opened
    }

    /// Appends to the index the buckets that changed since its root and a new root as of now,
    /// flushed, then names them in the commit file. Unread partitions of those buckets are read
    /// first (a bucket is written whole).
    private func appendToIndex(_ index: OpenIndex) throws(VaultError) {
        guard let changed = index.changedPartitions else { return }
        let count = index.root.buckets.count
        let touched = Set(changed.map { VaultIndex.bucket(of: $0, count: count) })
        if !index.complete {
            for number in touched {
                for value in try index.bucket(number, key: key, vaultId: header.vaultId).directory.keys { try readPartition(value) }
            }
            for value in changed { try readPartition(value) }
        }
        var wanted = Set<ByteKey>()
        for number in touched {
            if let directory = index.buckets[number]?.directory { wanted.formUnion(directory.keys) }
        }
        wanted.formUnion(changed)
        if index.complete {
            // Every record is in memory: the partitions of a touched bucket are those live now.
            wanted = Set(live.values.compactMap { partition(of: $0.record) }.filter { touched.contains(VaultIndex.bucket(of: $0, count: count)) })
        }
        let (always, partitions) = indexContents(partitions: wanted, splits: index.root.splits)
        // A changed partition grown past what a partition (or a shard) should hold: a whole new
        // index, which splits it (again) into shards of their target size.
        if let partitioning, partitioning.shard != nil,
           changed.contains(where: { (partitions[$0]?.count ?? 0) > Self.splitLimit(of: $0, partitioning, index.root.splits) }) {
            return try compactLocked()
        }
        var grouped = [Int: [(value: ByteKey, records: [(sequence: UInt64, record: VaultRecord)])]]()
        for number in touched { grouped[number] = [] }
        for (value, records) in partitions { grouped[VaultIndex.bucket(of: value, count: count)]?.append((value, records)) }
        var appended = [UInt8]()
        var root = index.root
        for (number, group) in grouped.sorted(by: { $0.key < $1.key }) {
            let offset = index.name.length + UInt64(appended.count)
            let (sealed, id) = sealedBucket(group, number: number, generation: generation, offset: offset)
            root.buckets[number] = VaultIndex.Bucket(offset: offset, length: UInt32(sealed.count),
                                                     records: UInt32(group.reduce(0) { $0 + $1.records.count }), id: id)
            appended += sealed
        }
        // The lookup buckets that hold a lookup value of a changed partition's records are written
        // again: their entries for changed partitions recomputed from what those hold now (all in
        // memory), the rest kept. An entry of a changed partition in a bucket not written again
        // may name a partition that no longer holds its value: reading it finds nothing (stale,
        // never missing), and the next whole index drops it.
        var lookupsWritten = [Int: [ByteKey: Set<ByteKey>]]()
        if let partitioning, partitioning.lookup != nil, let table = root.lookups, !table.isEmpty {
            var fresh = [Int: [ByteKey: Set<ByteKey>]]()
            for (partition, records) in partitions where changed.contains(partition) {
                for (_, record) in records {
                    guard let (value, _) = partitioning.lookupEntry(of: record, splits: index.root.splits) else { continue }
                    fresh[VaultIndex.bucket(of: value, count: table.count), default: [:]][value, default: []].insert(partition)
                }
            }
            for (number, additions) in fresh.sorted(by: { $0.key < $1.key }) {
                var entries = try index.lookupBucket(number, key: key, vaultId: header.vaultId)
                // (Each value names a partition or two: those are looked up in `changed`, not it
                // walked for every value of the bucket.)
                let stale = entries.filter { $0.value.contains(where: changed.contains) }
                for (value, partitions) in stale {
                    let kept = partitions.filter { !changed.contains($0) }
                    entries[value] = kept.isEmpty ? nil : kept
                }
                for (value, partitions) in additions { entries[value, default: []].formUnion(partitions) }
                let offset = index.name.length + UInt64(appended.count)
                let (sealed, id) = sealedLookup(entries, number: number, generation: generation, offset: offset)
                root.lookups![number] = VaultIndex.Bucket(offset: offset, length: UInt32(sealed.count),
                                                          records: UInt32(entries.values.reduce(0) { $0 + $1.count }), id: id)
                appended += sealed
                lookupsWritten[number] = entries
            }
        }
        // The vault outgrew the bucket count (its records many times what the buckets were sized
        // for): a fresh index, with a new count, in place of this append.
        if Self.crowded(root.buckets) || root.lookups.map(Self.crowded) == true { return try compactLocked() }
        if let partitioning {
            // The shards written again (all their records in memory) get their bounds anew; the
            // others keep theirs (a removal since leaves a bound high: still a bound).
            for value in wanted {
                if let (base, number) = Self.shard(value, splits: root.splits), root.bounds[base] != nil {
                    root.bounds[base]![number] = [UInt8](repeating: 0, count: VaultPartitioning.boundSize)
                }
            }
            Self.raise(&root.bounds, to: partitions, splits: root.splits, partitioning)
        }
        root.frames = frameCount
        root.logLength = UInt64(validLength)
        root.nextSequence = UInt64(nextSequence)
        root.always = always
        let (sealedRoot, rootId) = sealedRoot(root, offset: index.name.length + UInt64(appended.count))
        appended += sealedRoot
        let fd = try POSIXFile.openOwned(index.path, O_WRONLY)
        defer { close(fd) }
        // Whatever follows the committed end (an append that never got named) is cut off.
        guard ftruncate(fd, off_t(index.name.length)) == 0, lseek(fd, off_t(index.name.length), SEEK_SET) >= 0 else {
            throw VaultError(.io, "cannot trim \(index.path): \(POSIXFile.errorText())")
        }
        try POSIXFile.writeAll(fd, appended, path: index.path)
        try POSIXFile.sync(fd, path: index.path, durable: durable)
        let name = CommitPointer.IndexName(length: index.name.length + UInt64(appended.count), rootLength: UInt32(sealedRoot.count),
                                           rootId: rootId)
        try writeCommitPointer(CommitPointer(generation: generation, frameCount: frameCount, logLength: UInt64(validLength), index: name))
        index.root = root
        index.name = name
        for number in touched { index.buckets[number] = nil }
        for (number, entries) in lookupsWritten { index.lookupBuckets[number] = entries }
        index.changedSince = [:]
        index.changedPartitions = []
        index.rootWritten()
        namedIndex = name
    }
}
