import Foundation
import Testing
@testable import KeyVault
import TestSupport

/// The index (VaultIndex.swift): a vault opened through it holds exactly what a vault read whole
/// holds, reads only the partitions asked for, and refuses an index that was changed.
final class VaultIndexTests {
    let directory: TemporaryDirectory
    var root: String { directory.path }
    var path: String { root + "/vault" }
    static let partitioning = VaultPartitioning(kind: .credential, tag: 1)

    init() throws {
        directory = try TemporaryDirectory("authctl-index-test")
    }

    func passphrase() -> SecureBytes {
        var bytes = Array("index".utf8)
        return SecureBytes(consuming: &bytes)
    }

    func open(_ access: Vault.Access = .write, partitioned: Bool = true) throws -> Vault {
        try Vault.open(at: path, passphrase: passphrase(), access: access, partitioning: partitioned ? Self.partitioning : nil)
    }

    func create() throws -> Vault {
        try Vault.create(at: path, passphrase: passphrase(), kdf: .min, partitioning: Self.partitioning)
    }

    /// A passkey-like record of partition `rp` (field 1), with a payload naming its version.
    static func credential(_ id: [UInt8], rp: String, version: UInt64 = 1) -> VaultRecord {
        VaultRecord(id: id, kind: .credential, version: version, fields: [1: Array(rp.utf8), 2: Array("v\(version)".utf8)])
    }

    var indexBytes: [UInt8] { get throws { [UInt8](try Data(contentsOf: URL(fileURLWithPath: indexPath))) } }
    var indexPath: String { get throws { try Self.currentIndexPath(path) } }

    static func currentIndexPath(_ path: String) throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasPrefix("index.") }
        guard names.count == 1 else { throw VaultError(.invalid, "index files: \(names)") }
        return path + "/" + names[0]
    }

    /// What a vault holds, as a model: live records by id, in the order they became live.
    struct Model {
        var order = [[UInt8]]()
        var live = [[UInt8]: VaultRecord]()

        mutating func apply(_ record: VaultRecord) {
            if record.kind == .tombstone {
                live[record.id] = nil
                order.removeAll { $0 == record.id }
            } else {
                if live[record.id] == nil { order.append(record.id) }
                live[record.id] = record
            }
        }

        var records: [VaultRecord] { order.map { live[$0]! } }
        func partition(_ rp: String) -> [VaultRecord] {
            records.filter { $0.kind == .credential && $0.field(1).map(Array.init) == Array(rp.utf8) }
        }
    }

    /// Random commits — new passkeys, new versions, removals, passkeys coming back after their
    /// removal, a settings record changing — with the vault reopened through the index, read
    /// whole, and through a process that does not use the index; every reading equals the model.
    @Test func theIndexHoldsWhatTheLogHolds() throws {
        var generator = SystemRandomNumberGenerator()
        let rps = (0..<12).map { "rp\($0).example" }
        var model = Model()
        var vault: Vault? = try create()
        var removed = [[UInt8]: UInt64]()
        let settingsId = [UInt8](repeating: 0xEE, count: 16)
        var settingsVersion: UInt64 = 0
        for step in 0..<400 {
            var batch = [VaultRecord]()
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let roll = Int.random(in: 0..<10, using: &generator)
                let liveIds = model.order.filter { model.live[$0]!.kind == .credential }
                if roll < 4 || liveIds.isEmpty {
                    batch.append(Self.credential(VaultRecord.newId(), rp: rps.randomElement(using: &generator)!))
                } else if roll < 6, let id = liveIds.randomElement(using: &generator), !batch.contains(where: { $0.id == id }) {
                    let old = model.live[id]!
                    batch.append(Self.credential(id, rp: String(decoding: old.field(1)!, as: UTF8.self), version: old.version + 1))
                } else if roll < 8, let id = liveIds.randomElement(using: &generator), !batch.contains(where: { $0.id == id }) {
                    batch.append(VaultRecord(id: id, kind: .tombstone, version: model.live[id]!.version + 1))
                    removed[id] = model.live[id]!.version + 1
                } else if roll == 8, let (id, _) = removed.randomElement(using: &generator), !batch.contains(where: { $0.id == id }) {
                    removed[id] = nil
                    batch.append(Self.credential(id, rp: rps.randomElement(using: &generator)!))  // back, at version 1
                } else if !batch.contains(where: { $0.id == settingsId }) {
                    settingsVersion += 1
                    batch.append(VaultRecord(id: settingsId, kind: .settings, version: settingsVersion, fields: [7: [UInt8(step & 0xFF)]]))
                }
            }
            try vault!.commit(batch)
            for record in batch { model.apply(record) }
            if step % 37 == 36 {
                vault = nil
                let reopened = try open()
                // One partition first (read from its bucket), then everything.
                let rp = rps.randomElement(using: &generator)!
                #expect(try reopened.records(kind: .credential, field: 1, equals: Array(rp.utf8)) == model.partition(rp), "step \(step)")
                #expect(try reopened.records(kind: .settings) == model.records.filter { $0.kind == .settings })
                #expect(try reopened.records == model.records, "step \(step)")
                vault = reopened
            }
            if step % 101 == 100 { try vault!.compact() }
        }
        vault = nil
        // Read whole, by a process that does not use the index: the same records, in the same order.
        #expect(try open(.read, partitioned: false).records == model.records)
        // A writer that does not use the index leaves it named and correct: what it writes is the
        // log after the index.
        do {
            let plain = try open(partitioned: false)
            let rp = rps[0]
            let added = Self.credential(VaultRecord.newId(), rp: rp)
            let victim = model.partition(rps[1]).first
            try plain.commit([added] + (victim.map { [VaultRecord(id: $0.id, kind: .tombstone, version: $0.version + 1)] } ?? []))
            model.apply(added)
            if let victim { model.apply(VaultRecord(id: victim.id, kind: .tombstone, version: victim.version + 1)) }
        }
        let again = try open(.read)
        for rp in rps { #expect(try again.records(kind: .credential, field: 1, equals: Array(rp.utf8)) == model.partition(rp), "\(rp)") }
        #expect(try again.records == model.records)
    }

    /// Opening a large vault through its index reads its root and the log after it; asking for
    /// one partition reads that one.
    @Test func onlyThePartitionAskedForIsRead() throws {
        do {
            let vault = try create()
            var batches = [[VaultRecord]]()
            for i in 0..<2000 { batches.append([Self.credential(VaultRecord.newId(), rp: "rp\(i % 200).example")]) }
            try vault.commit(batches: batches)
            try vault.commit([Self.credential(VaultRecord.newId(), rp: "target.example")])
        }
        let vault = try open(.read)
        #expect(vault.index != nil)
        #expect(vault.live.count <= 2)  // the target's passkey, in the log after the index, at most
        let found = try vault.records(kind: .credential, field: 1, equals: Array("rp7.example".utf8))
        #expect(found.count == 10)
        #expect(vault.index?.loadedPartitions == [ByteKey(Array("rp7.example".utf8))])
        #expect(vault.live.count <= 12)
        #expect(try vault.facts.liveRecords[.credential] == 2001)
        #expect(vault.index?.complete == true)
    }

    /// The index is written again as the log grows, by appending; the commit file names how much
    /// of it counts, so an append that was never named is cut off, not read.
    @Test func theIndexFollowsTheLog() throws {
        let vault = try create()
        try vault.commit([Self.credential(VaultRecord.newId(), rp: "a.example")])
        let first = try vault.facts.indexedFrames
        for i in 0..<40 { try vault.commit([Self.credential(VaultRecord.newId(), rp: "rp\(i % 3).example")]) }
        let facts = try vault.facts
        #expect(first != nil && facts.indexedFrames! > first!)
        #expect(facts.frames - facts.indexedFrames! < Vault.indexRefreshFrames)
        let before = try indexBytes.count
        #expect(UInt64(before) == facts.indexBytes)
        // An append that died before the commit file named it.
        let handle = FileHandle(forWritingAtPath: try indexPath)!
        handle.seekToEndOfFile()
        handle.write(Data(repeating: 0x5A, count: 300))
        handle.closeFile()
        #expect(try open(.read).records.count == 41)
        for i in 0..<20 { try vault.commit([Self.credential(VaultRecord.newId(), rp: "rp\(i % 3).example")]) }
        #expect(try open(.read).records.count == 61)
        #expect(try indexBytes.count == Int(try vault.facts.indexBytes))  // the unnamed append was cut off
    }

    /// A vault with many records outside the partitions (an account's devices) writes its index
    /// less often as that root grows: each write copies the whole root, so at a fixed 16 frames
    /// N one-record changes copied N²/16 records. The tail an open reads past the index stays at
    /// most about an eighth of the root.
    @Test func theIndexIsWrittenLessOftenAsItsRootGrows() throws {
        let vault = try create()
        var writes = 0, last = try vault.facts.indexedFrames
        for n in 0..<1200 {
            try vault.commit([VaultRecord(id: VaultRecord.newId(), kind: .device, fields: [8: Array("device-\(n)".utf8)])])
            let indexed = try vault.facts.indexedFrames
            if indexed != last { writes += 1 }
            last = indexed
        }
        // 16 frames apart until the root holds 128 records, then an eighth of it: some 8 + 17.
        #expect(writes < 40)
        let facts = try vault.facts
        #expect(facts.frames - facts.indexedFrames! <= max(Vault.indexRefreshFrames, 1200 / 8))
        #expect(try open(.read).records(kind: .device).count == 1200)
    }

    /// The same for one big partition (an RP holding every passkey): its bucket is copied whole at
    /// each write, so at a fixed 16 frames N registrations for one RP copied N²/16 records; the
    /// interval grows with the largest bucket written, and an open reads past the index at most
    /// about an eighth of it. Records of other partitions still open from the index.
    @Test func theIndexIsWrittenLessOftenAsOneBigPartitionGrows() throws {
        let vault = try create()
        try vault.commit([Self.credential(VaultRecord.newId(), rp: "other.example")])
        var writes = 0, last = try vault.facts.indexedFrames
        for _ in 0..<1200 {
            try vault.commit([Self.credential(VaultRecord.newId(), rp: "big.example")])
            let indexed = try vault.facts.indexedFrames
            if indexed != last { writes += 1 }
            last = indexed
        }
        // 16 frames apart until the bucket holds 128 records, then an eighth of it: some 8 + 17
        // (75 at a fixed interval).
        #expect(writes < 40)
        let facts = try vault.facts
        #expect(facts.frames - facts.indexedFrames! <= max(Vault.indexRefreshFrames, 1201 / 8 + 1))
        let reopened = try open(.read)
        #expect(try reopened.records(kind: .credential, field: 1, equals: Array("big.example".utf8)).count == 1200)
        #expect(try reopened.records(kind: .credential, field: 1, equals: Array("other.example".utf8)).count == 1)
    }

    /// Every open reads the whole index root: when a large unpartitioned record in it is replaced
    /// by a small one, the next commit writes the root again, rather than leaving every open to
    /// decrypt the stale megabyte until the next refresh. A large record that stays large as it
    /// changes does not make every commit rewrite it.
    @Test func aRootMostlyReplacedSinceIsWrittenAgainAtTheNextCommit() throws {
        let vault = try create()
        let id = VaultRecord.newId()
        var version: UInt64 = 1
        func state(_ size: Int) -> VaultRecord {
            defer { version += 1 }
            return VaultRecord(id: id, kind: .device, version: version, fields: [8: [UInt8](repeating: 7, count: size)])
        }
        try vault.commit([state(1 << 20)])
        var credentials = 0
        repeat {
            try vault.commit([Self.credential(VaultRecord.newId(), rp: "a.example")])
            credentials += 1
        } while try vault.facts.indexedFrames != vault.facts.frames && credentials < 100
        #expect(try vault.facts.indexedFrames == vault.facts.frames)  // the root holds the megabyte
        // Large as it changes: the root waits for its refresh as before.
        var rewrites = 0
        for _ in 0..<5 {
            try vault.commit([state(1 << 20)])
            if try vault.facts.indexedFrames == vault.facts.frames { rewrites += 1 }
        }
        #expect(rewrites == 0)
        // Small now: written again at once.
        try vault.commit([state(16)])
        #expect(try vault.facts.indexedFrames == vault.facts.frames)
        let reopened = try open(.read)
        #expect(try reopened.record(id: id)?.field(8)?.count == 16)
        #expect(try reopened.records(kind: .credential, field: 1, equals: Array("a.example".utf8)).count == credentials)
    }

    /// A derived value given a way to follow changes is made once and kept in step with every
    /// commit; one without is made again after each change.
    @Test func aFollowedDerivedValueIsKeptInStepWithoutBeingMadeAgain() throws {
        let vault = try create()
        func names() throws -> [String] {
            try vault.derived("names", { () throws(VaultError) in
                try vault.records(kind: .device).map { String(decoding: $0.field(8) ?? [], as: UTF8.self) }
            }, following: { names, record in
                guard record.kind == .device else { return true }
                names.append(String(decoding: record.field(8) ?? [], as: UTF8.self))
                return true
            })
        }
        func count() throws -> Int { try vault.derived("count") { () throws(VaultError) in try vault.records(kind: .device).count } }
        #expect(try names() == [] && count() == 0)
        let before = vault.derivations
        for n in 0..<50 {
            try vault.commit([VaultRecord(id: VaultRecord.newId(), kind: .device, fields: [8: Array("d\(n)".utf8)]),
                              Self.credential(VaultRecord.newId(), rp: "a.example")])
            #expect(try names().last == "d\(n)" && count() == n + 1)
        }
        #expect(vault.derivations - before == 50)  // only the count, once per change
        #expect(try names() == (0..<50).map { "d\($0)" })
    }

    func openError() -> VaultError.Kind? {
        do {
            let vault = try open(.read)
            _ = try vault.records
            return nil
        } catch let error as VaultError {
            return error.kind
        } catch {
            return .io
        }
    }

    /// A changed byte anywhere in the part of the index that counts, an index cut short, missing,
    /// or swapped for another vault's: `corrupted`, never a different set of records.
    @Test func aChangedIndexIsCorrupted() throws {
        do {
            let vault = try create()
            var batches = [[VaultRecord]]()
            for i in 0..<300 { batches.append([Self.credential(VaultRecord.newId(), rp: "rp\(i % 30).example")]) }
            try vault.commit(batches: batches)
            try vault.commit([Self.credential(VaultRecord.newId(), rp: "rp1.example")])
        }
        let original = try indexBytes
        let file = try indexPath
        #expect(openError() == nil)
        let step = max(1, original.count / 97)
        for offset in stride(from: 0, to: original.count, by: step) {
            var changed = original
            changed[offset] ^= 0x20
            try Data(changed).write(to: URL(fileURLWithPath: file))
            #expect(openError() == .corrupted, "byte \(offset) of \(original.count)")
        }
        try Data(original.dropLast(1)).write(to: URL(fileURLWithPath: file))
        #expect(openError() == .corrupted)
        try FileManager.default.removeItem(atPath: file)
        #expect(openError() == .corrupted)
        // Another vault's index (same passphrase, same layout) in its place.
        let other = root + "/other"
        do {
            let vault = try Vault.create(at: other, passphrase: passphrase(), kdf: .min, partitioning: Self.partitioning)
            var batches = [[VaultRecord]]()
            for i in 0..<300 { batches.append([Self.credential(VaultRecord.newId(), rp: "rp\(i % 30).example")]) }
            try vault.commit(batches: batches)
            try vault.commit([Self.credential(VaultRecord.newId(), rp: "rp1.example")])
        }
        try FileManager.default.copyItem(atPath: try Self.currentIndexPath(other), toPath: file)
        #expect(openError() == .corrupted)
        try FileManager.default.removeItem(atPath: file)
        try Data(original).write(to: URL(fileURLWithPath: file))
        #expect(openError() == nil)
    }

    /// A changed byte in the part of the log the index covers: opening through the index does not
    /// read it, but reading every record, checking and compacting do, and call it `corrupted`.
    @Test func aChangedByteUnderTheIndexIsFoundByEveryWholeReading() throws {
        do {
            let vault = try create()
            for i in 0..<40 { try vault.commit([Self.credential(VaultRecord.newId(), rp: "rp\(i % 4).example")]) }
        }
        let logPath = path + "/log.0"
        var log = [UInt8](try Data(contentsOf: URL(fileURLWithPath: logPath)))
        log[40] ^= 0x01  // inside frame 0's ciphertext
        try Data(log).write(to: URL(fileURLWithPath: logPath))
        let reader = try open(.read)
        #expect(try reader.records(kind: .credential, field: 1, equals: Array("rp1.example".utf8)).count == 10)
        #expect(throws: VaultError.self) { try reader.verify() }
        #expect(openError() == .corrupted)
        let writer = try open()
        let error = #expect(throws: VaultError.self) { try writer.compact() }
        #expect(error?.kind == .corrupted)
        #expect(FileManager.default.fileExists(atPath: logPath))  // nothing was replaced
    }

    /// The root and bucket decoders (what the fuzzer drives) read what the writer writes, and
    /// refuse a count that the bytes cannot hold.
    @Test func indexPlaintextsDecode() throws {
        let record = Self.credential(VaultRecord.newId(), rp: "a.example")
        let settings = VaultRecord(id: VaultRecord.newId(), kind: .settings, version: 2, fields: [8: [1]])
        let root = VaultIndex(generation: 3, frames: 9, logLength: 999, nextSequence: 4, partitioning: Self.partitioning,
                              buckets: VaultIndex.BucketTable([.init(offset: 0, length: 80, records: 1, id: [UInt8](repeating: 9, count: 16))]), always: [(1, settings)])
        #expect(try VaultDecoding.indexRoot(root.rootPlaintext) == root.rootPlaintext)
        let bucket = VaultDecoding.encodeIndexBucket([(Array("a.example".utf8), [record])])
        let decoded = try VaultDecoding.indexBucket(bucket)
        #expect(decoded.count == 1 && decoded[0].partition == Array("a.example".utf8) && decoded[0].records == [record])
        var lying = root.rootPlaintext
        lying[34..<38] = [0xFF, 0xFF, 0xFF, 0xFF]  // the bucket count
        #expect(throws: VaultError.self) { try VaultDecoding.indexRoot(lying) }
        #expect(throws: VaultError.self) { try VaultDecoding.indexBucket(Array(bucket.dropLast())) }

        // The split section is sorted by value, as written: a root that lists its split partitions
        // in another order (the same splits) is refused, not read and written back differently.
        let split = VaultIndex(generation: 3, frames: 9, logLength: 999, nextSequence: 4, partitioning: VaultPartitioning(kind: .credential, tag: 1, lookup: 1, shard: 3),
                               buckets: root.buckets, always: [], lookups: root.buckets,
                               splits: [ByteKey(Array("a.example".utf8)): 2, ByteKey(Array("b.example".utf8)): 3])
        let sorted = split.rootPlaintext
        #expect(try VaultDecoding.indexRoot(sorted) == sorted)
        let a = [0, 9] + Array("a.example".utf8) + [0, 2], b = [0, 9] + Array("b.example".utf8) + [0, 3]
        let tail = sorted.count - a.count - b.count
        #expect(Array(sorted[tail...]) == a + b)
        let swapped = Array(sorted[..<tail]) + b + a
        let error = #expect(throws: VaultError.self) { try VaultDecoding.indexRoot(swapped) }
        #expect(error?.kind == .corrupted)
    }

    /// A bucket from another write of the same generation, at the same place and of the same
    /// length (a compaction that died leaves one behind; the next compaction writes its own):
    /// the root names each bucket by its hash, so it is refused rather than read as current.
    @Test func aBucketFromAnotherWriteOfTheSameGenerationIsRefused() throws {
        let id = VaultRecord.newId()
        do {
            let vault = try create()
            try vault.commit([Self.credential(id, rp: "x.example")])
        }
        let backup = root + "/backup"
        try FileManager.default.copyItem(atPath: path, toPath: backup)
        do {
            let vault = try open()
            try vault.commit([Self.credential(id, rp: "x.example", version: 2)])  // same size, newer
            try vault.compact()
        }
        do {
            let old = try Vault.open(at: backup, passphrase: passphrase(), access: .write, partitioning: Self.partitioning)
            try old.compact()
        }
        let current = try indexBytes, stale = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try Self.currentIndexPath(backup))))
        #expect(try indexPath.hasSuffix("index.1") && Self.currentIndexPath(backup).hasSuffix("index.1"))
        #expect(current.count == stale.count && current != stale)
        // The stale bucket (everything before the root) under the current root.
        let reader = try open(.read)
        let rootLength = Int(reader.namedIndex!.rootLength)
        var spliced = current
        spliced.replaceSubrange(0..<(current.count - rootLength), with: stale[0..<(stale.count - rootLength)])
        try Data(spliced).write(to: URL(fileURLWithPath: try indexPath))
        let error = #expect(throws: VaultError.self) {
            try self.open(.read).records(kind: .credential, field: 1, equals: Array("x.example".utf8))
        }
        #expect(error?.kind == .corrupted)
        // And the stale root (with its bucket) under the current commit file: refused by its hash.
        try Data(stale).write(to: URL(fileURLWithPath: try indexPath))
        #expect(openError() == .corrupted)
    }

    /// A reader tidies leftovers only if the vault is still what it read: a compaction by a writer
    /// in between makes the next generation's files current, not leftovers.
    @Test func aReaderDoesNotTidyAWriterSFiles() throws {
        do {
            let vault = try create()
            for i in 0..<5 { try vault.commit([Self.credential(VaultRecord.newId(), rp: "rp\(i).example")]) }
        }
        let reader = try open(.read)
        do { try open().compact() }
        #expect(FileManager.default.fileExists(atPath: path + "/log.1") && FileManager.default.fileExists(atPath: path + "/index.1"))
        try reader.tidy(wait: .zero)
        #expect(FileManager.default.fileExists(atPath: path + "/log.1") && FileManager.default.fileExists(atPath: path + "/index.1"))
        #expect(try open(.read).records.count == 5)
    }

    /// One RP with many passkeys is one large bucket, which compaction cannot shrink: it must not
    /// make every refresh compact the vault.
    @Test func aLargeRPDoesNotMakeEveryRefreshCompact() throws {
        let vault = try create()
        let payload = [UInt8](repeating: 0x61, count: 600)
        var batches = [[VaultRecord]]()
        for _ in 0..<600 {
            batches.append([VaultRecord(id: VaultRecord.newId(), kind: .credential, fields: [1: Array("big.example".utf8), 2: payload])])
        }
        for i in 0..<60 { batches.append([Self.credential(VaultRecord.newId(), rp: "rp\(i).example")]) }
        try vault.commit(batches: batches)
        try vault.compact()
        let generation = vault.generation
        #expect(try vault.facts.indexedFrames != nil)
        // An RP in another bucket than the large one: its changes rewrite only its own bucket.
        let count = vault.index!.root.buckets.count
        let big = VaultIndex.bucket(of: ByteKey(Array("big.example".utf8)), count: count)
        #expect(vault.index!.root.buckets[big].length > 256 * 1024)
        let small = try #require((0..<100).map { "rp\($0).example" }.first { VaultIndex.bucket(of: ByteKey(Array($0.utf8)), count: count) != big })
        for _ in 0..<80 { try vault.commit([Self.credential(VaultRecord.newId(), rp: small)]) }
        #expect(vault.generation == generation)
        #expect(try vault.facts.frames - vault.facts.indexedFrames! < Vault.indexRefreshFrames)
    }

    /// An older copy of the index (from before it was written again) is refused: the commit file
    /// names more of it than the copy holds.
    @Test func anOlderIndexIsRefused() throws {
        let vault = try create()
        for i in 0..<20 { try vault.commit([Self.credential(VaultRecord.newId(), rp: "rp\(i % 4).example")]) }
        let old = try indexBytes
        for i in 0..<20 { try vault.commit([Self.credential(VaultRecord.newId(), rp: "rp\(i % 4).example")]) }
        #expect(try indexBytes.count > old.count)
        try Data(old).write(to: URL(fileURLWithPath: try indexPath))
        #expect(openError() == .corrupted)
    }

    /// A vault from before the index (a 64-byte commit file, no index) opens read whole; its first
    /// writer's commit gives it an index.
    @Test func aVaultWithoutAnIndexGetsOne() throws {
        do {
            let vault = try create()
            for i in 0..<5 { try vault.commit([Self.credential(VaultRecord.newId(), rp: "rp\(i).example")]) }
            // The commit file as the format had it: generation, frames and log length only.
            var w = ByteWriter()
            w.append(vault.generation)
            w.append(vault.frameCount)
            w.append(UInt64(vault.validLength))
            let sealed = w.bytes.withUnsafeBytes { Sodium.seal($0, key: vault.key, associatedData: CommitPointer.associatedData(vaultId: vault.vaultId)) }
            #expect(sealed.count == 64)
            try Data(sealed).write(to: URL(fileURLWithPath: path + "/commit"))
            try FileManager.default.removeItem(atPath: try indexPath)
        }
        let reader = try open(.read)
        #expect(reader.index == nil && reader.live.count == 5)
        let writer = try open()
        #expect(try writer.records.count == 5)
        try writer.commit([Self.credential(VaultRecord.newId(), rp: "rp9.example")])
        #expect(writer.index != nil)
        #expect(FileManager.default.fileExists(atPath: try indexPath))
        let lazy = try open(.read)
        #expect(lazy.index != nil && lazy.live.count == 0)
        #expect(try lazy.records.count == 6)
    }

    /// A key rotation writes a new generation without an index; the next commit writes one under
    /// the new key.
    @Test func aNewKeyGetsANewIndex() throws {
        let vault = try create()
        for i in 0..<30 { try vault.commit([Self.credential(VaultRecord.newId(), rp: "rp\(i % 5).example")]) }
        var bytes = Array("rotated".utf8)
        try vault.changePassphrase(to: SecureBytes(consuming: &bytes), kdf: nil, sealedFields: [:])
        #expect(vault.index == nil)
        try vault.commit([Self.credential(VaultRecord.newId(), rp: "rp0.example")])
        #expect(vault.index != nil)
        var again = Array("rotated".utf8)
        let reopened = try Vault.open(at: path, passphrase: SecureBytes(consuming: &again), access: .read, partitioning: Self.partitioning)
        #expect(try reopened.records(kind: .credential, field: 1, equals: Array("rp0.example".utf8)).count == 7)
        #expect(try reopened.records.count == 31)
    }
}
