#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(ByteOrder) import ByteOrder

/// Which records a vault may leave unread until they are asked for: those of `kind` that carry
/// field `tag`, grouped by that field's value (a *partition*: for passkeys, their RP ID). Every
/// other record is read at open.
///
/// With a `lookup` tag, the index also keeps a secondary index: each value of that field (for
/// passkeys, the credential id) → the partitions holding a record with it, in sealed lookup
/// buckets of its own, so a record found by that field costs one lookup bucket and its partition
/// rather than every partition.
package struct VaultPartitioning: Equatable, Sendable {
    package let kind: VaultRecord.Kind
    package let tag: UInt8
    package let lookup: UInt8?
    /// The field that splits a partition grown past ``splitRecords`` records into *shards* (for
    /// passkeys, the user handle): each shard a partition of its own, so a record found by its
    /// lookup value, or by partition and shard value, costs one shard rather than the whole
    /// partition. Which partitions are split, and into how many shards, the index root says.
    package let shard: UInt8?
    /// Records above which a whole index splits a partition (not part of the format: a tuning).
    package let splitRecords: Int
    /// With shards: an upper bound of what a record of the partitioned kind gives, which the index
    /// keeps per shard (the largest its records give; an empty shard all zeros), so that a caller
    /// can read a split partition's shards in descending order of it and stop early
    /// (``Vault/shardBounds(kind:field:equals:)``). Index format 4. A bound is ``boundSize`` bytes
    /// compared as one unsigned big-endian number (a longer one is cut, a shorter one padded with
    /// zeros); for passkeys, a place in creation order: the latest creation instant a revision
    /// carries and the passkey's item id. Only whether there is one is part of the format: a bound
    /// that changes meaning needs another shard tag.
    package let bound: (@Sendable (VaultRecord) -> [UInt8])?

    /// The bytes of a shard bound.
    package static let boundSize = 32

    /// `bytes` as a bound of ``boundSize`` bytes.
    static func shardBound(_ bytes: [UInt8]) -> [UInt8] {
        bytes.count == boundSize ? bytes : Array((bytes + [UInt8](repeating: 0, count: boundSize)).prefix(boundSize))
    }

    /// The higher of two bounds.
    static func higher(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] { a.lexicographicallyPrecedes(b) ? b : a }

    package init(kind: VaultRecord.Kind, tag: UInt8, lookup: UInt8? = nil, shard: UInt8? = nil, splitRecords: Int = 1024,
                 bound: (@Sendable (VaultRecord) -> [UInt8])? = nil) {
        self.kind = kind
        self.tag = tag
        self.lookup = lookup
        self.shard = shard
        self.splitRecords = max(1, splitRecords)
        if shard != nil, let bound {
            self.bound = { @Sendable record in Self.shardBound(bound(record)) }
        } else {
            self.bound = nil
        }
    }

    package static func == (a: Self, b: Self) -> Bool {
        a.kind == b.kind && a.tag == b.tag && a.lookup == b.lookup && a.shard == b.shard && (a.bound == nil) == (b.bound == nil)
    }

    /// The shard tag as a root of index format 4 with a split partition writes it: the tag with
    /// bit 6 set (`0x43`), which says the root carries shard bounds (a reader of format 3 takes it
    /// for a partitioning it does not build, and does not use the index). Field tags are below
    /// 0x40. A root that splits nothing carries no bounds and writes the plain tag: every authctl
    /// that splits by the same tag uses it, with or without bounds.
    static let boundedShardFlag: UInt8 = 0x40

    /// This partitioning without a bound: what a root that splits nothing is read as, and is the
    /// same as for either.
    var unbounded: VaultPartitioning {
        VaultPartitioning(kind: kind, tag: tag, lookup: lookup, shard: shard, splitRecords: splitRecords)
    }

    /// Records a shard of a split partition holds on average when it is split.
    var shardRecords: Int { max(1, splitRecords / 16) }

    /// The lookup value of `record` (a record of the partitioned kind with the lookup field) and
    /// its partition; `nil` for any other record.
    func lookupEntry(of record: VaultRecord, splits: [ByteKey: UInt16]) -> (value: ByteKey, partition: ByteKey)? {
        guard let lookup, record.kind == kind, let value = record.field(lookup), let partition = partition(of: record, splits: splits) else { return nil }
        return (ByteKey(Array(value)), partition)
    }

    /// The partition field's value of `record`; `nil` for a record read at open. A tombstone
    /// carries the fields of the record it removes (written so by ``Vault/commit(_:)``).
    func base(of record: VaultRecord) -> ByteKey? {
        guard record.kind == kind || record.kind == .tombstone, let value = record.field(tag) else { return nil }
        return ByteKey(Array(value))
    }

    /// The partition `record` belongs to under `splits` (partition value → shard count): its
    /// partition field's value, or that value's shard when the partition is split.
    func partition(of record: VaultRecord, splits: [ByteKey: UInt16]) -> ByteKey? {
        guard let base = base(of: record) else { return nil }
        guard !splits.isEmpty, let count = splits[base] else { return base }
        return Self.shardKey(base, Self.shardNumber(of: shard.flatMap { record.field($0) }, count: count))
    }

    /// The partitions that hold what has partition value `base`: itself, or its shards.
    static func partitions(of base: ByteKey, splits: [ByteKey: UInt16]) -> [ByteKey] {
        guard let count = splits[base] else { return [base] }
        return (0..<count).map { shardKey(base, $0) }
    }

    /// The one partition holding what has partition value `base` and shard value `value`.
    static func partition(of base: ByteKey, shardValue value: [UInt8], splits: [ByteKey: UInt16]) -> ByteKey {
        guard let count = splits[base] else { return base }
        return shardKey(base, shardNumber(of: value[...], count: count))
    }

    /// Shard `number` of partition `base`: its value ‖ 0xFF ‖ number (u16). (A partition value is
    /// text — an RP ID — which never holds the byte 0xFF.)
    static func shardKey(_ base: ByteKey, _ number: UInt16) -> ByteKey {
        ByteKey(Array(base.bytes) + [0xFF, UInt8(number >> 8), UInt8(number & 0xFF)])
    }

    /// The shard of `count` a shard value falls in: the first 8 bytes of its BLAKE2b-256,
    /// big-endian, modulo the count (a record without the field: shard 0).
    static func shardNumber(of value: ArraySlice<UInt8>?, count: UInt16) -> UInt16 {
        guard let value, count > 1 else { return 0 }
        let digest = Sodium.checksum(Array(value))
        let prefix: UInt64 = BigEndianBytes.integer(digest[0..<8])
        return UInt16(prefix % UInt64(count))
    }
}

/// The index snapshot `index.<g>` of log generation *g* (docs/vault-format.md, "Index"): the live
/// records as of frame `frames` of the log, those of each partition in a sealed bucket of their
/// own choosing, the rest in the root. Opening reads the root and the log after `frames`; a
/// partition's bucket is read the first time the partition is asked for. The file is appended to
/// (new versions of the buckets that changed, then a new root); `commit` says how much of it
/// counts and how long its root is, so a torn append is cut off like the log's.
struct VaultIndex {
    /// One bucket's latest version in the file, and the random id it was sealed with (which
    /// names this version: a bucket left by a compaction that died, or by an append cut off, may
    /// have the same generation, number and offset).
    struct Bucket: Equatable {
        var offset: UInt64
        var length: UInt32
        var records: UInt32
        var id: [UInt8]
    }

    /// The root's bucket entries, kept as the bytes they were read from (32 each) and decoded one
    /// at a time: the root of a 100,000-passkey vault has some 1,500 of them, and a ceremony uses one.
    struct BucketTable: RandomAccessCollection, MutableCollection {
        static let entrySize = 32
        private(set) var bytes: [UInt8]

        init(bytes: [UInt8]) { self.bytes = bytes }

        init(_ buckets: [Bucket]) {
            bytes = []
            bytes.reserveCapacity(buckets.count * Self.entrySize)
            for bucket in buckets {
                bytes += BigEndianBytes.of(bucket.offset) + BigEndianBytes.of(bucket.length) + BigEndianBytes.of(bucket.records) + bucket.id
            }
        }

        var startIndex: Int { 0 }
        var endIndex: Int { bytes.count / Self.entrySize }

        /// Bucket `position`'s record count and length, read without decoding the entry.
        func records(at position: Int) -> UInt32 { BigEndianBytes.integer(bytes[position * Self.entrySize + 12..<position * Self.entrySize + 16]) }
        func length(at position: Int) -> UInt32 { BigEndianBytes.integer(bytes[position * Self.entrySize + 8..<position * Self.entrySize + 12]) }

        subscript(position: Int) -> Bucket {
            get {
                let o = position * Self.entrySize
                return Bucket(offset: BigEndianBytes.integer(bytes[o..<o + 8]), length: BigEndianBytes.integer(bytes[o + 8..<o + 12]),
                              records: BigEndianBytes.integer(bytes[o + 12..<o + 16]), id: Array(bytes[o + 16..<o + 32]))
            }
            set {
                let o = position * Self.entrySize
                bytes.replaceSubrange(o..<o + Self.entrySize,
                                      with: BigEndianBytes.of(newValue.offset) + BigEndianBytes.of(newValue.length) + BigEndianBytes.of(newValue.records) + newValue.id)
            }
        }
    }

    var generation: UInt64
    /// The log frames (and bytes) the snapshot covers: the tail after them is read at open.
    var frames: UInt64
    var logLength: UInt64
    /// The vault's next sequence number at the snapshot (the order records became live).
    var nextSequence: UInt64
    var partitioning: VaultPartitioning
    var buckets: BucketTable
    /// The records read at open, with their sequence numbers.
    var always: [(sequence: UInt64, record: VaultRecord)]
    /// The lookup buckets (secondary index, ``VaultPartitioning/lookup``), each entry's `records`
    /// its count of (value, partition) entries; `nil` when the partitioning has no lookup tag.
    var lookups: BucketTable?
    /// The split partitions (``VaultPartitioning/shard``): partition value → its shard count.
    var splits: [ByteKey: UInt16] = [:]
    /// With a ``VaultPartitioning/bound``: per split partition, each shard's bound as of the root
    /// (as many as ``splits`` counts).
    var bounds: [ByteKey: [[UInt8]]] = [:]

    /// Passkeys per bucket that a new index aims at: a bucket of some 64 passkeys is a few tens of
    /// kilobytes, decrypted in microseconds.
    static let bucketTargetBytes = 32 * 1024

    var recordCount: Int { always.count + buckets.indices.reduce(0) { $0 + Int(buckets.records(at: $1)) } }

    /// Which bucket holds partition `value`: the first 8 bytes of its BLAKE2b-256, big-endian,
    /// modulo the bucket count.
    static func bucket(of value: ByteKey, count: Int) -> Int {
        let digest = Sodium.checksum(Array(value.bytes))
        let prefix: UInt64 = BigEndianBytes.integer(digest[0..<8])
        return Int(prefix % UInt64(max(count, 1)))
    }

    // MARK: - Sealing

    private static let rootLabel = Array("AUTHCTL-INDEX".utf8)
    private static let bucketLabel = Array("AUTHCTL-INDEX-BUCKET".utf8)

    /// Associated data of the root `id` at byte `offset` of `index.<generation>`.
    static func rootAssociatedData(vaultId: [UInt8], generation: UInt64, offset: UInt64, id: [UInt8]) -> [UInt8] {
        var w = ByteWriter(capacity: 63)
        w.append(rootLabel)
        w.append(VaultHeader.formatVersion)
        w.append(vaultId)
        w.append(generation)
        w.append(offset)
        w.append(id)
        return w.bytes
    }

    /// Associated data of bucket `number`, sealed with `id`, at byte `offset` of
    /// `index.<generation>`: a bucket cannot be moved within the file, to another bucket, file or
    /// vault, nor stand in for another write of the same bucket.
    static func bucketAssociatedData(vaultId: [UInt8], generation: UInt64, number: Int, offset: UInt64, id: [UInt8]) -> [UInt8] {
        var w = ByteWriter(capacity: 74)
        w.append(bucketLabel)
        w.append(VaultHeader.formatVersion)
        w.append(vaultId)
        w.append(generation)
        w.append(UInt32(number))
        w.append(offset)
        w.append(id)
        return w.bytes
    }

    // MARK: - Encoding

    /// generation ‖ frames ‖ logLength ‖ nextSequence (u64 each) ‖ kind u8 ‖ tag u8 ‖ bucketCount u32 ‖
    /// bucketCount × (offset u64 ‖ length u32 ‖ records u32 ‖ id (16)) ‖ alwaysCount u32 ‖
    /// alwaysCount × (sequence u64 ‖ record)
    var rootPlaintext: [UInt8] {
        var w = ByteWriter()
        w.append(generation)
        w.append(frames)
        w.append(logLength)
        w.append(nextSequence)
        w.append(partitioning.kind.rawValue)
        w.append(partitioning.tag)
        w.append(UInt32(buckets.count))
        w.append(buckets.bytes)
        w.append(UInt32(always.count))
        for (sequence, record) in always {
            w.append(sequence)
            w.append(record.bytes)
        }
        // Index format 2: the lookup section. A root without it (format 1) ends above.
        if let lookup = partitioning.lookup, let lookups {
            let sorted = splits.sorted(by: { $0.key < $1.key })
            // Index format 4: the shard bounds, 32 bytes each, split partition by split partition in
            // the split section's order, as whole 32-byte words that follow the lookup bucket
            // entries and are counted with them — so that a reader of format 3 parses the root
            // (and, its shard tag not being one it builds, does not use the index).
            var words = [UInt8]()
            if partitioning.bound != nil, partitioning.shard != nil, !splits.isEmpty {
                for (value, count) in sorted {
                    let shardBounds = bounds[value] ?? []
                    for n in 0..<Int(count) {
                        words += n < shardBounds.count ? VaultPartitioning.shardBound(shardBounds[n])
                            : [UInt8](repeating: 0xFF, count: VaultPartitioning.boundSize)
                    }
                }
            }
            w.append(lookup)
            w.append(UInt32(lookups.count + words.count / BucketTable.entrySize))
            w.append(lookups.bytes)
            w.append(words)
            // Index format 3: the split partitions. A root without them (format 2) ends above.
            if let shard = partitioning.shard {
                w.append(partitioning.bound == nil || splits.isEmpty ? shard : shard | VaultPartitioning.boundedShardFlag)
                w.append(UInt32(splits.count))
                for (value, count) in sorted {
                    w.append(UInt16(value.bytes.count))
                    w.append(Array(value.bytes))
                    w.append(count)
                }
            }
        }
        return w.bytes
    }

    /// Shard bounds taken for a root read: any bound will do, only whether there is one is known.
    static let readBound: @Sendable (VaultRecord) -> [UInt8] = { _ in [UInt8](repeating: 0xFF, count: VaultPartitioning.boundSize) }

    init(generation: UInt64, frames: UInt64, logLength: UInt64, nextSequence: UInt64, partitioning: VaultPartitioning,
         buckets: BucketTable, always: [(sequence: UInt64, record: VaultRecord)], lookups: BucketTable? = nil,
         splits: [ByteKey: UInt16] = [:], bounds: [ByteKey: [[UInt8]]] = [:]) {
        self.generation = generation
        self.frames = frames
        self.logLength = logLength
        self.nextSequence = nextSequence
        self.partitioning = partitioning
        self.buckets = buckets
        self.always = always
        self.lookups = partitioning.lookup == nil ? nil : lookups ?? BucketTable([])
        self.splits = partitioning.shard == nil ? [:] : splits
        self.bounds = partitioning.bound == nil ? [:] : bounds
    }

    init(rootPlaintext plain: [UInt8]) throws(VaultError) {
        var r = ByteReader(plain, context: "the index root")
        generation = try r.read(UInt64.self)
        frames = try r.read(UInt64.self)
        logLength = try r.read(UInt64.self)
        nextSequence = try r.read(UInt64.self)
        let kind = VaultRecord.Kind(rawValue: try r.read(UInt8.self)), tag = try r.read(UInt8.self)
        let count = Int(try r.read(UInt32.self))
        guard count >= 1, count <= r.remaining / BucketTable.entrySize else { throw VaultError(.corrupted, "the index root claims \(count) buckets") }
        buckets = BucketTable(bytes: try r.take(count * BucketTable.entrySize))
        let alwaysCount = Int(try r.read(UInt32.self))
        guard alwaysCount <= r.remaining / 35 else { throw VaultError(.corrupted, "the index root claims \(alwaysCount) records") }
        always = []
        for _ in 0..<alwaysCount {
            let sequence = try r.read(UInt64.self)
            let record = try VaultRecord(reading: &r)
            guard record.kind != .tombstone else { throw VaultError(.corrupted, "the index root holds a tombstone") }
            always.append((sequence, record))
        }
        // A root of index format 1 ends here: no lookup section, so it indexes by a partitioning
        // without a lookup tag (and is not used, but replaced, by a process that wants one).
        if r.remaining == 0 {
            partitioning = VaultPartitioning(kind: kind, tag: tag)
            lookups = nil
        } else {
            let lookup = try r.read(UInt8.self)
            let count = Int(try r.read(UInt32.self))
            guard count <= r.remaining / BucketTable.entrySize else { throw VaultError(.corrupted, "the index root claims \(count) lookup buckets") }
            var table = try r.take(count * BucketTable.entrySize)
            lookups = BucketTable(bytes: table)
            if r.remaining == 0 {
                partitioning = VaultPartitioning(kind: kind, tag: tag, lookup: lookup)
            } else {
                let shardByte = try r.read(UInt8.self)
                let bounded = shardByte & VaultPartitioning.boundedShardFlag != 0
                let shard = shardByte & ~VaultPartitioning.boundedShardFlag
                let splitCount = Int(try r.read(UInt32.self))
                guard splitCount <= r.remaining / 5 else { throw VaultError(.corrupted, "the index root claims \(splitCount) split partitions") }
                var previous: ByteKey?
                for _ in 0..<splitCount {
                    let value = ByteKey(try r.take(Int(try r.read(UInt16.self))))
                    let shards = try r.read(UInt16.self)
                    // Sorted by value, as written: one encoding per root (a repeat is out of order too).
                    guard shards >= 2, previous.map({ $0 < value }) ?? true else {
                        throw VaultError(.corrupted, "the index root lists split partitions out of order, twice, or with fewer than two shards")
                    }
                    splits[value] = shards
                    previous = value
                }
                partitioning = VaultPartitioning(kind: kind, tag: tag, lookup: lookup, shard: shard,
                                                 bound: bounded ? Self.readBound : nil)
                if bounded {
                    // Format 4: the shard bounds are the lookup table's last words (see rootPlaintext).
                    let sorted = splits.keys.sorted()
                    let total = sorted.reduce(0) { $0 + Int(splits[$1]!) }
                    let size = VaultPartitioning.boundSize
                    guard total <= table.count / size else { throw VaultError(.corrupted, "the index root's shard bounds do not fit its lookup section") }
                    let words = Array(table[(table.count - total * size)...])
                    table.removeLast(total * size)
                    lookups = BucketTable(bytes: table)
                    var at = 0
                    for value in sorted {
                        var list = [[UInt8]]()
                        list.reserveCapacity(Int(splits[value]!))
                        for _ in 0..<Int(splits[value]!) {
                            list.append(Array(words[at..<at + size]))
                            at += size
                        }
                        bounds[value] = list
                    }
                }
            }
        }
        guard r.remaining == 0 else { throw VaultError(.corrupted, "the index root has \(r.remaining) trailing bytes") }
    }

    /// Lookup bucket *n*'s associated data, as a bucket's but under its own label: a lookup bucket
    /// cannot stand in for a bucket of records, nor for another lookup bucket.
    static func lookupAssociatedData(vaultId: [UInt8], generation: UInt64, number: Int, offset: UInt64, id: [UInt8]) -> [UInt8] {
        var w = ByteWriter(capacity: 74)
        w.append(lookupLabel)
        w.append(VaultHeader.formatVersion)
        w.append(vaultId)
        w.append(generation)
        w.append(UInt32(number))
        w.append(offset)
        w.append(id)
        return w.bytes
    }

    private static let lookupLabel = Array("AUTHCTL-INDEX-LOOKUP".utf8)

    /// A lookup bucket's plaintext: entry count u32 ‖ per entry (valueLength u16 ‖ value ‖
    /// partitionLength u16 ‖ partition), sorted by value then partition.
    static func lookupPlaintext(_ entries: [ByteKey: Set<ByteKey>]) -> [UInt8] {
        var w = ByteWriter()
        var pairs = [(ByteKey, ByteKey)]()
        pairs.reserveCapacity(entries.count)
        for (value, partitions) in entries { for partition in partitions { pairs.append((value, partition)) } }
        pairs.sort { $0 < $1 }
        w.append(UInt32(pairs.count))
        for (value, partition) in pairs {
            w.append(UInt16(value.bytes.count))
            w.append(Array(value.bytes))
            w.append(UInt16(partition.bytes.count))
            w.append(Array(partition.bytes))
        }
        return w.bytes
    }

    /// The entries of lookup bucket `number`'s plaintext, checked: as many as the root counts,
    /// each value in the bucket its hash gives (of `count` lookup buckets).
    static func lookupEntries(_ plain: [UInt8], number: Int, count: Int, expected: Int) throws(VaultError) -> [ByteKey: Set<ByteKey>] {
        var r = ByteReader(plain, context: "index lookup bucket \(number)")
        let entries = Int(try r.read(UInt32.self))
        guard entries == expected else { throw VaultError(.corrupted, "index lookup bucket \(number) does not hold the entries its root counts") }
        var out = [ByteKey: Set<ByteKey>]()
        for _ in 0..<entries {
            let value = ByteKey(try r.take(Int(try r.read(UInt16.self))))
            let partition = ByteKey(try r.take(Int(try r.read(UInt16.self))))
            guard bucket(of: value, count: count) == number else { throw VaultError(.corrupted, "index lookup bucket \(number) holds a value of another bucket") }
            out[value, default: []].insert(partition)
        }
        guard r.remaining == 0 else { throw VaultError(.corrupted, "index lookup bucket \(number) has \(r.remaining) trailing bytes") }
        return out
    }

    /// The partitions a lookup bucket's plaintext names for `value`, ascending, checked for layout
    /// and count as it is passed over.
    static func lookupScan(_ plain: [UInt8], for value: ByteKey, number: Int, expected: Int) throws(VaultError) -> [ByteKey] {
        func u16(_ at: Int) -> Int { Int(BigEndianBytes.integer(plain[at..<at + 2]) as UInt16) }
        let damaged = VaultError(.corrupted, "index lookup bucket \(number) is damaged")
        guard plain.count >= 4 else { throw damaged }
        let entries = Int(BigEndianBytes.integer(plain[0..<4]) as UInt32)
        guard entries == expected else { throw VaultError(.corrupted, "index lookup bucket \(number) does not hold the entries its root counts") }
        var found = [ByteKey]()
        var at = 4
        let wanted = value.bytes.count
        for _ in 0..<entries {
            guard at + 2 <= plain.count else { throw damaged }
            let length = u16(at)
            let start = at + 2
            guard start + length + 2 <= plain.count else { throw damaged }
            at = start + length
            let partitionLength = u16(at)
            guard at + 2 + partitionLength <= plain.count else { throw damaged }
            if length == wanted && ByteKey(plain[start..<start + length]) == value {
                found.append(ByteKey(Array(plain[(at + 2)..<(at + 2 + partitionLength)])))
            }
            at += 2 + partitionLength
        }
        guard at == plain.count else { throw VaultError(.corrupted, "index lookup bucket \(number) has \(plain.count - at) trailing bytes") }
        return found
    }

    /// A bucket's plaintext: partitionCount u32 ‖ per partition (valueLength u16 ‖ value ‖
    /// recordCount u32 ‖ byteLength u32 ‖ recordCount × (sequence u64 ‖ record)).
    static func bucketPlaintext(_ partitions: [(value: ByteKey, records: [(sequence: UInt64, record: VaultRecord)])]) -> [UInt8] {
        var w = ByteWriter()
        w.append(UInt32(partitions.count))
        for (value, records) in partitions {
            w.append(UInt16(value.bytes.count))
            w.append(Array(value.bytes))
            var body = ByteWriter()
            for (sequence, record) in records {
                body.append(sequence)
                body.append(record.bytes)
            }
            w.append(UInt32(records.count))
            w.append(UInt32(body.bytes.count))
            w.append(body.bytes)
        }
        return w.bytes
    }

    /// The partitions of a bucket's plaintext, each with the byte range of its records, checked
    /// for layout (the records themselves are read when their partition is).
    static func bucketDirectory(_ plain: [UInt8], number: Int) throws(VaultError) -> [ByteKey: (count: Int, range: Range<Int>)] {
        var r = ByteReader(plain, context: "index bucket \(number)")
        let count = Int(try r.read(UInt32.self))
        guard count <= r.remaining / 10 else { throw VaultError(.corrupted, "index bucket \(number) claims \(count) partitions") }
        var out = [ByteKey: (count: Int, range: Range<Int>)]()
        for _ in 0..<count {
            let value = ByteKey(try r.take(Int(try r.read(UInt16.self))))
            let records = Int(try r.read(UInt32.self))
            let length = Int(try r.read(UInt32.self))
            let start = r.offset
            try r.skip(length)
            guard out[value] == nil else { throw VaultError(.corrupted, "index bucket \(number) lists a partition twice") }
            guard records <= length / 35 else { throw VaultError(.corrupted, "index bucket \(number) claims \(records) records") }
            out[value] = (records, start..<start + length)
        }
        guard r.remaining == 0 else { throw VaultError(.corrupted, "index bucket \(number) has \(r.remaining) trailing bytes") }
        return out
    }

    /// The records of one partition: `range` of a bucket's plaintext.
    static func partitionRecords(_ plain: [UInt8], range: Range<Int>, count: Int, number: Int) throws(VaultError) -> [(sequence: UInt64, record: VaultRecord)] {
        var r = ByteReader(Array(plain[range]), context: "index bucket \(number)")
        var out = [(sequence: UInt64, record: VaultRecord)]()
        out.reserveCapacity(count)
        for _ in 0..<count {
            let sequence = try r.read(UInt64.self)
            let record = try VaultRecord(reading: &r)
            guard record.kind != .tombstone else { throw VaultError(.corrupted, "index bucket \(number) holds a tombstone") }
            out.append((sequence, record))
        }
        guard r.remaining == 0 else { throw VaultError(.corrupted, "index bucket \(number) has a partition with trailing bytes") }
        return out
    }
}

/// An open `index.<g>`: its root, the file (kept open, so the buckets read later are those of the
/// file the root came from), and what has been read of it.
final class OpenIndex {
    var root: VaultIndex
    let fd: Int32
    let path: String
    /// What the commit file names: the bytes of the file that count, the root's length and hash.
    var name: CommitPointer.IndexName
    /// Decrypted buckets, by number, with their partitions' places.
    var buckets: [Int: (plain: [UInt8], directory: [ByteKey: (count: Int, range: Range<Int>)])] = [:]
    var loadedPartitions = Set<ByteKey>()
    /// Decrypted lookup buckets, by number: value → partitions.
    var lookupBuckets: [Int: [ByteKey: Set<ByteKey>]] = [:]
    /// Every bucket read: nothing is left unread.
    var complete = false
    /// Per id, the version of its first record after the snapshot (in the log's tail or written
    /// since) — the snapshot's version of that id is older, and is not the live one — and whether
    /// a tombstone removed it since (a record that comes back after one takes a new place in the
    /// vault's order; one replaced keeps the snapshot's).
    var changedSince = [ByteKey: (version: UInt64, removed: Bool)]()
    /// The root's unpartitioned records replaced or removed since it was written, each with its
    /// encoded length in the root (tracked only for a large root: ``Vault/rootShrinkage(_:)``).
    var replacedInRoot = [ByteKey: Int]()
    private var alwaysLengths: [ByteKey: Int]?

    /// The encoded length of the root's record `id`, when the root holds one (found once per root).
    func alwaysLength(of id: ByteKey) -> Int? {
        if alwaysLengths == nil {
            alwaysLengths = Dictionary(root.always.map { (ByteKey($0.record.id), $0.record.encodedLength) }, uniquingKeysWith: { a, _ in a })
        }
        return alwaysLengths![id]
    }

    /// A new root is written: nothing in it is replaced yet.
    func rootWritten() {
        alwaysLengths = nil
        replacedInRoot = [:]
    }

    /// Partitions changed after the snapshot, which its next version must write again; `nil`
    /// when a change could not be placed (a tombstone of an unread record without the field).
    var changedPartitions: Set<ByteKey>? = []

    init(root: VaultIndex, fd: Int32, path: String, name: CommitPointer.IndexName) {
        self.root = root
        self.fd = fd
        self.path = path
        self.name = name
    }

    deinit { close(fd) }

    /// Lookup bucket `number`, decrypted once.
    func lookupBucket(_ number: Int, key: SecureBytes, vaultId: [UInt8]) throws(VaultError) -> [ByteKey: Set<ByteKey>] {
        if let cached = lookupBuckets[number] { return cached }
        let (plain, expected, count) = try lookupPlaintext(number, key: key, vaultId: vaultId)
        let entries = try VaultIndex.lookupEntries(plain, number: number, count: count, expected: expected)
        lookupBuckets[number] = entries
        return entries
    }

    /// The partitions lookup bucket `number` names for `value`, found by a pass over its entries
    /// rather than a map of them all (which a write of the bucket needs, and a reading of every
    /// record checks value by value): a credential looked up costs its bucket's decryption and
    /// a comparison per entry.
    func lookupPartitions(of value: ByteKey, in number: Int, key: SecureBytes, vaultId: [UInt8]) throws(VaultError) -> [ByteKey] {
        if let cached = lookupBuckets[number] { return (cached[value] ?? []).sorted() }
        let (plain, expected, _) = try lookupPlaintext(number, key: key, vaultId: vaultId)
        return try VaultIndex.lookupScan(plain, for: value, number: number, expected: expected)
    }

    /// Lookup bucket `number` decrypted, with the entry count its root gives and the bucket count.
    private func lookupPlaintext(_ number: Int, key: SecureBytes, vaultId: [UInt8]) throws(VaultError) -> (plain: [UInt8], expected: Int, count: Int) {
        guard let table = root.lookups, table.indices.contains(number) else { throw VaultError(.corrupted, "the index has no lookup bucket \(number)") }
        let ref = table[number]
        let end = name.length - UInt64(name.rootLength)
        guard ref.offset <= end, UInt64(ref.length) <= end - ref.offset else {
            throw VaultError(.corrupted, "index lookup bucket \(number) lies outside the index")
        }
        let sealed = try POSIXFile.read(fd, path: path, at: ref.offset, count: Int(ref.length))
        let aad = VaultIndex.lookupAssociatedData(vaultId: vaultId, generation: root.generation, number: number, offset: ref.offset, id: ref.id)
        guard let plain = Sodium.openNonSecret(sealed[...], key: key, associatedData: aad) else {
            throw VaultError(.corrupted, "index lookup bucket \(number) failed authentication: the vault was damaged or tampered with")
        }
        return (plain, Int(ref.records), table.count)
    }

    /// Bucket `number`, decrypted once.
    func bucket(_ number: Int, key: SecureBytes, vaultId: [UInt8]) throws(VaultError) -> (plain: [UInt8], directory: [ByteKey: (count: Int, range: Range<Int>)]) {
        if let cached = buckets[number] { return cached }
        let ref = root.buckets[number]
        let end = name.length - UInt64(name.rootLength)
        guard ref.offset <= end, UInt64(ref.length) <= end - ref.offset else {
            throw VaultError(.corrupted, "index bucket \(number) lies outside the index")
        }
        let sealed = try POSIXFile.read(fd, path: path, at: ref.offset, count: Int(ref.length))
        let aad = VaultIndex.bucketAssociatedData(vaultId: vaultId, generation: root.generation, number: number, offset: ref.offset, id: ref.id)
        guard let plain = Sodium.openNonSecret(sealed[...], key: key, associatedData: aad) else {
            throw VaultError(.corrupted, "index bucket \(number) failed authentication: the vault was damaged or tampered with")
        }
        let directory = try VaultIndex.bucketDirectory(plain, number: number)
        guard directory.values.reduce(0, { $0 + $1.count }) == Int(ref.records) else {
            throw VaultError(.corrupted, "index bucket \(number) does not hold the records its root counts")
        }
        buckets[number] = (plain, directory)
        return (plain, directory)
    }
}
