import Foundation
import Testing
@testable import KeyVault
import TestSupport

/// A partition grown past ``VaultPartitioning/splitRecords`` records is split by its shard field
/// into shards of their own: a record found by its lookup value, or by partition and shard value,
/// costs one shard; the whole partition still reads whole; the split stays exact through appends,
/// removals, compaction, a split grown again, and an index written before shards (format 2),
/// which is replaced rather than misread.
final class VaultSplitTests {
    let directory: TemporaryDirectory
    var root: String { directory.path }
    var path: String { root + "/vault" }
    /// Partitions by field 1 (the "RP"), looks up by field 3 (the "credential id"), splits by
    /// field 4 (the "user") past 32 records: shards of some 2 records.
    static let partitioning = VaultPartitioning(kind: .credential, tag: 1, lookup: 3, shard: 4, splitRecords: 32)

    init() throws {
        directory = try TemporaryDirectory("authctl-split-test")
    }

    func passphrase() -> SecureBytes {
        var bytes = Array("split".utf8)
        return SecureBytes(consuming: &bytes)
    }

    func open(_ access: Vault.Access = .read, partitioning: VaultPartitioning? = VaultSplitTests.partitioning) throws -> Vault {
        try Vault.open(at: path, passphrase: passphrase(), access: access, partitioning: partitioning)
    }

    static let big = Array("big.example".utf8)
    static func id(_ n: Int) -> [UInt8] { [UInt8(n >> 8), UInt8(n & 0xFF)] + [UInt8](repeating: 0x5A, count: 14) }
    static func credentialId(_ n: Int) -> [UInt8] { Array("cred-\(n)".utf8) }
    static func user(_ n: Int) -> [UInt8] { Array("user-\(n % 150)".utf8) }

    /// Record `record` for credential `n` of the big RP (or, `small`, of an RP of its own few).
    static func revision(_ record: Int, credential n: Int, small: Bool = false, version: UInt64 = 1) -> VaultRecord {
        VaultRecord(id: id(record), kind: .credential, version: version,
                    fields: [1: small ? Array("rp\(n % 7).example".utf8) : big, 2: Array("v\(version)".utf8), 3: credentialId(n), 4: user(n)])
    }

    /// 400 credentials of one RP (a user having two or three) and 40 over 7 small RPs, a frame each.
    func populate() throws {
        let vault = try Vault.create(at: path, passphrase: passphrase(), kdf: .min, partitioning: Self.partitioning)
        for n in 0..<400 { try vault.commit([Self.revision(n, credential: n)]) }
        for n in 400..<440 { try vault.commit([Self.revision(n, credential: n, small: true)]) }
    }

    func whole() throws -> [VaultRecord] { try open(partitioning: nil).records(kind: .credential) }

    /// Whether a record is live is asked of the shard the record's own fields name: one shard read,
    /// not the RP nor the vault; a record removed since, or never there, is not held.
    @Test func holdsRecordReadsTheRecordsOwnShardOnly() throws {
        try populate()
        do {
            let writer = try open(.write)
            try writer.commit([VaultRecord(id: Self.id(5), kind: .tombstone, version: 2)])
        }
        let vault = try open()
        #expect(try vault.holdsRecord(like: Self.revision(7, credential: 7)))
        #expect(vault.partitionsRead == 1)
        // Another id in the same shard (user 7's): no other partition read.
        #expect(try !vault.holdsRecord(like: Self.revision(1000, credential: 157)))
        #expect(vault.partitionsRead == 1)
        // Removed since (user 5's shard: one more, unless it is user 7's).
        #expect(try !vault.holdsRecord(like: Self.revision(5, credential: 5)))
        let shards = vault.partitionsRead
        #expect(shards <= 2)
        // A small RP's record: its one partition.
        #expect(try vault.holdsRecord(like: Self.revision(405, credential: 405, small: true)))
        #expect(vault.partitionsRead == shards + 1)
    }

    @Test func aBigPartitionIsSplitAndAUserOrCredentialCostsOneShard() throws {
        try populate()
        let vault = try open()
        #expect(vault.isSplit(Self.big))
        #expect(!vault.isSplit(Array("rp1.example".utf8)))
        let every = try whole()
        for n in [0, 7, 149, 399] {
            let fresh = try open()
            let before = fresh.partitionsRead
            let mine = try fresh.records(kind: .credential, field: 1, equals: Self.big, shard: Self.user(n))
            #expect(mine.map(\.id) == every.filter { $0.field(1).map(Array.init) == Self.big && $0.field(4).map(Array.init) == Self.user(n) }.map(\.id))
            #expect(mine.count >= 2)
            #expect(fresh.partitionsRead - before == 1)
            let again = try open()
            let found = try again.records(kind: .credential, field: 3, equals: Self.credentialId(n))
            #expect(found.map(\.id) == [Self.id(n)])
            #expect(again.partitionsRead == 1)
        }
        // The RP read whole is every shard, in the vault's order.
        let fresh = try open()
        #expect(try fresh.records(kind: .credential, field: 1, equals: Self.big).map(\.id)
            == every.filter { $0.field(1).map(Array.init) == Self.big }.map(\.id))
        #expect(fresh.partitionsRead > 16)
        // A small RP is one partition still, asked for by user too.
        let small = try open()
        let user = Self.user(401)
        #expect(try small.records(kind: .credential, field: 1, equals: Array("rp2.example".utf8), shard: user).map(\.id)
            == every.filter { $0.field(1).map(Array.init) == Array("rp2.example".utf8) && $0.field(4).map(Array.init) == user }.map(\.id))
        #expect(small.partitionsRead == 1)
    }

    @Test func theSplitStaysExactThroughChangesRemovalsCompactionAndGrowth() throws {
        try populate()
        // New versions, removals (tombstones name only the id: the vault adds both fields), and
        // 600 more records, enough for the shards to outgrow their size and be split again.
        for n in stride(from: 0, to: 400, by: 5) {
            let vault = try open(.write)
            try vault.commit([Self.revision(n, credential: n, version: 2)])
            try vault.commit([VaultRecord(id: Self.id(n + 1), kind: .tombstone, version: 2)])
        }
        let before = try open()
        let shardsBefore = before.splits[ByteKey(Self.big)]
        do {
            let writer = try open(.write)
            for n in 1000..<1600 { try writer.commit([Self.revision(n, credential: n)]) }
        }
        let after = try open()
        #expect((after.splits[ByteKey(Self.big)] ?? 0) > (shardsBefore ?? 0))
        let every = try whole()
        #expect(every.count == 440 - 80 + 600)
        for n in [0, 1, 2, 5, 6, 150, 395, 1000, 1333, 1599] {
            let vault = try open()
            let expected = every.filter { $0.field(3).map(Array.init) == Self.credentialId(n) }
            #expect(try vault.records(kind: .credential, field: 3, equals: Self.credentialId(n)) == expected)
            #expect(vault.partitionsRead <= 1)
            let byUser = try open().records(kind: .credential, field: 1, equals: Self.big, shard: Self.user(n))
            #expect(byUser == every.filter { $0.field(1).map(Array.init) == Self.big && $0.field(4).map(Array.init) == Self.user(n) })
        }
        // Read whole through the split index, the vault verifies against its log.
        let vault = try open()
        try vault.verify()
        #expect(try vault.records(kind: .credential) == every)
    }

    @Test func anIndexWithoutShardsIsReplacedNotMisread() throws {
        // Written by a process without a shard field (index format 2).
        let plain = VaultPartitioning(kind: .credential, tag: 1, lookup: 3)
        do {
            let vault = try Vault.create(at: path, passphrase: passphrase(), kdf: .min, partitioning: plain)
            for n in 0..<400 { try vault.commit([Self.revision(n, credential: n)]) }
        }
        let old = try Vault.open(at: path, passphrase: passphrase(), access: .read, partitioning: plain)
        #expect(old.index != nil)
        #expect(try old.records(kind: .credential, field: 3, equals: Self.credentialId(3)).count == 1)
        // This process does not use it (another partitioning), reads the log, and its first write replaces it.
        let reader = try open()
        #expect(reader.index == nil)
        #expect(try reader.records(kind: .credential, field: 3, equals: Self.credentialId(3)).map(\.id) == [Self.id(3)])
        try open(.write).commit([Self.revision(500, credential: 500)])
        let split = try open()
        #expect(split.isSplit(Self.big))
        #expect(try split.records(kind: .credential, field: 3, equals: Self.credentialId(3)).map(\.id) == [Self.id(3)])
        #expect(split.partitionsRead == 1)
    }
}

/// Index format 4: the root keeps, per shard of a split partition, an upper bound of what the
/// partitioning's ``VaultPartitioning/bound`` gives its records, so that a caller reads a split
/// partition's shards newest first and stops early. The bounds hold for the records of the index
/// and for those written after it; an index without them (format 3) is replaced, not misread; a
/// damaged bounds section is `corrupted`.
final class VaultShardBoundTests {
    let directory: TemporaryDirectory
    var path: String { directory.path + "/vault" }
    /// As ``VaultSplitTests/partitioning``, bounded by field 5 (8 bytes, a big-endian number; the
    /// vault pads a bound to 32 bytes with zeros).
    static let bounded = VaultPartitioning(kind: .credential, tag: 1, lookup: 3, shard: 4, splitRecords: 32, bound: { record in
        record.field(5).map(Array.init) ?? []
    })

    /// A 32-byte bound as the number its first 8 bytes are.
    static func value(_ bound: [UInt8]) -> UInt64 { bound.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }

    /// `value` as a 32-byte bound.
    static func bound(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) + [UInt8](repeating: 0, count: 24) }

    /// The bound the partitioning gives `record`, as a number.
    static func value(of record: VaultRecord) -> UInt64 { value(bounded.bound!(record)) }

    init() throws { directory = try TemporaryDirectory("authctl-bound-test") }

    func passphrase() -> SecureBytes {
        var bytes = Array("bound".utf8)
        return SecureBytes(consuming: &bytes)
    }

    func open(_ access: Vault.Access = .read, _ partitioning: VaultPartitioning = VaultShardBoundTests.bounded) throws -> Vault {
        try Vault.open(at: path, passphrase: passphrase(), access: access, partitioning: partitioning)
    }

    static func revision(_ n: Int, bound: UInt64) -> VaultRecord {
        var r = VaultSplitTests.revision(n, credential: n)
        r.setField(5, [UInt8](withUnsafeBytes(of: bound.bigEndian, Array.init)))
        return r
    }

    /// Each shard's records, from the whole log.
    func shards(_ count: Int) throws -> [[VaultRecord]] {
        var out = [[VaultRecord]](repeating: [], count: count)
        for r in try Vault.open(at: path, passphrase: passphrase(), access: .read, partitioning: nil).records(kind: .credential)
        where r.field(1).map(Array.init) == VaultSplitTests.big {
            out[Int(VaultPartitioning.shardNumber(of: r.field(4), count: UInt16(count)))].append(r)
        }
        return out
    }

    @Test func everyShardIsBoundedAndTheLogAfterTheIndexRaisesItsShard() throws {
        do {
            let vault = try Vault.create(at: path, passphrase: passphrase(), kdf: .min, partitioning: Self.bounded)
            for n in 0..<400 { try vault.commit([Self.revision(n, bound: UInt64(1000 + n))]) }
            try vault.compact()
        }
        let reader = try open()
        let bounds = try #require(reader.shardBounds(kind: .credential, field: 1, equals: VaultSplitTests.big)).map(Self.value)
        #expect(bounds.count > 2)
        for (n, records) in try shards(bounds.count).enumerated() {
            // Just written whole: each bound is its shard's largest, not only above it.
            #expect(bounds[n] == records.map(Self.value(of:)).max() ?? 0, "shard \(n)")
        }
        #expect(reader.partitionsRead == 0)  // from the root alone
        // One shard read by number: that shard only, exactly its records.
        let top = bounds.indices.max { bounds[$0] < bounds[$1] }!
        #expect(try reader.records(kind: .credential, field: 1, equals: VaultSplitTests.big, shardNumber: top) == shards(bounds.count)[top])
        #expect(reader.partitionsRead == 1)

        // A newer record written after the index (in the log past it): its shard's bound rises at
        // once; the newest removed leaves its shard's bound as it was (still a bound).
        do {
            let writer = try open(.write)
            try writer.commit([Self.revision(401, bound: 5000)])
            try writer.commit([VaultRecord(id: VaultSplitTests.id(399), kind: .tombstone, version: 2)])
        }
        let after = try open()
        #expect(after.index.map { $0.root.frames } ?? 0 < after.frameCount)  // still past the index
        let raised = try #require(after.shardBounds(kind: .credential, field: 1, equals: VaultSplitTests.big)).map(Self.value)
        let shard401 = try #require(after.shardNumber(kind: .credential, field: 1, equals: VaultSplitTests.big, shard: VaultSplitTests.user(401)))
        #expect(raised[shard401] == 5000)
        for (n, records) in try shards(raised.count).enumerated() {
            #expect(raised[n] >= records.map(Self.value(of:)).max() ?? 0, "shard \(n)")
        }
        // Appended and compacted: exact again.
        do {
            let writer = try open(.write)
            let before = try #require(writer.index).root
            #expect(!(try #require(writer.index)).complete)
            // (An index of one bucket of 400 records is written again every 50 frames.)
            for n in 402..<470 { try writer.commit([Self.revision(n, bound: UInt64(1000 + n))]) }
            let written = try #require(writer.index).root  // appended to, or compacted
            #expect(written.generation > before.generation || written.frames > before.frames)
            let appended = try #require(writer.index.map { $0.root.bounds[ByteKey(VaultSplitTests.big)] } ?? nil).map(Self.value)
            // (Appending may have compacted, and split the RP into another number of shards.)
            let shard = try #require(writer.shardNumber(kind: .credential, field: 1, equals: VaultSplitTests.big, shard: VaultSplitTests.user(401)))
            #expect(appended[shard] == 5000)
            try writer.compact()
        }
        let compacted = try #require(open().shardBounds(kind: .credential, field: 1, equals: VaultSplitTests.big)).map(Self.value)
        for (n, records) in try shards(compacted.count).enumerated() {
            #expect(compacted[n] == records.map(Self.value(of:)).max() ?? 0, "shard \(n)")
        }
    }

    /// Format 3 (no bounds) and format 4 tell each other apart by the shard tag: each is read
    /// around by a process of the other (the log is read) and replaced by its first write.
    @Test func anIndexOfTheOtherFormatIsReadAroundAndReplaced() throws {
        do {
            let vault = try Vault.create(at: path, passphrase: passphrase(), kdf: .min, partitioning: VaultSplitTests.partitioning)
            for n in 0..<400 { try vault.commit([Self.revision(n, bound: UInt64(n))]) }
        }
        let format3 = try open(.read, VaultSplitTests.partitioning)
        #expect(format3.index != nil && format3.isSplit(VaultSplitTests.big))
        let new = try open()
        #expect(new.index == nil && new.shardBounds(kind: .credential, field: 1, equals: VaultSplitTests.big) == nil)
        #expect(try new.records(kind: .credential, field: 3, equals: VaultSplitTests.credentialId(3)).map(\.id) == [VaultSplitTests.id(3)])
        try open(.write).commit([Self.revision(500, bound: 500)])
        let replaced = try open()
        #expect(replaced.shardBounds(kind: .credential, field: 1, equals: VaultSplitTests.big) != nil)
        // And back: a process without bounds does not use the format 4 index.
        let older = try open(.read, VaultSplitTests.partitioning)
        #expect(older.index == nil)
        #expect(try older.records(kind: .credential).count == 401)
    }

    /// A root that splits nothing carries no bounds and writes the plain shard tag: a process
    /// with bounds and one without both use it (no vault without a big RP is read around by
    /// either); once an RP is split, each reads around the other's.
    @Test func aRootThatSplitsNothingServesEither() throws {
        do {
            let vault = try Vault.create(at: path, passphrase: passphrase(), kdf: .min, partitioning: Self.bounded)
            for n in 0..<20 { try vault.commit([Self.revision(n, bound: UInt64(n))]) }
            try vault.compact()
        }
        let withBounds = try open()
        #expect(withBounds.index != nil && !withBounds.isSplit(VaultSplitTests.big))
        #expect(withBounds.index.map { $0.root.partitioning.bound == nil } == true)  // written with the plain tag
        let without = try open(.read, VaultSplitTests.partitioning)
        #expect(without.index != nil)
        #expect(try without.records(kind: .credential).count == 20)
        // Written by a process without bounds: used by one with them, and appended to by it.
        try open(.write, VaultSplitTests.partitioning).compact()
        let writer = try open(.write)
        #expect(writer.index != nil)
        try writer.commit([Self.revision(20, bound: 20)])
        #expect(try open(.read, VaultSplitTests.partitioning).records(kind: .credential).count == 21)
    }

    /// The bounds round-trip through the root's encoding, 32 bytes each, as words after the lookup
    /// entries that count them; a lookup section too short to hold them is `corrupted`.
    @Test func aDamagedBoundsSectionIsCorrupted() throws {
        let table = VaultIndex.BucketTable([.init(offset: 0, length: 80, records: 1, id: [UInt8](repeating: 9, count: 16))])
        let top = [UInt8](repeating: 0xFF, count: 32)
        let root = VaultIndex(generation: 3, frames: 9, logLength: 999, nextSequence: 4, partitioning: Self.bounded, buckets: table,
                              always: [], lookups: table, splits: [ByteKey(Array("a.example".utf8)): 2, ByteKey(Array("b.example".utf8)): 4],
                              bounds: [ByteKey(Array("a.example".utf8)): [Self.bound(7), Self.bound(8)],
                                       ByteKey(Array("b.example".utf8)): [Self.bound(1), Self.bound(2), Self.bound(3), top]])
        let plain = root.rootPlaintext
        let read = try VaultIndex(rootPlaintext: plain)
        #expect(read.bounds == root.bounds && read.lookups?.count == 1 && read.partitioning == Self.bounded)
        #expect(read.partitioning != VaultSplitTests.partitioning)
        #expect(try VaultDecoding.indexRoot(plain) == plain)
        // 6 bounds: six words after the one lookup entry, in the split section's order.
        let splitSection = 1 + 4 + (2 + 9 + 2) * 2
        let lookupCount = plain.count - splitSection - 7 * 32 - 4
        #expect(Array(plain[lookupCount..<lookupCount + 4]) == [0, 0, 0, 7])
        #expect(Array(plain[(plain.count - splitSection - 32)..<(plain.count - splitSection)]) == top)
        #expect(Array(plain[(plain.count - splitSection - 6 * 32)..<(plain.count - splitSection - 5 * 32)]) == Self.bound(7))
        // Counted as one lookup entry only: the bounds do not fit.
        var short = Array(plain[..<(lookupCount + 36)]) + Array(plain[(plain.count - splitSection)...])
        short[lookupCount..<lookupCount + 4] = [0, 0, 0, 1]
        #expect((#expect(throws: VaultError.self) { try VaultIndex(rootPlaintext: short) })?.kind == .corrupted)
    }
}
