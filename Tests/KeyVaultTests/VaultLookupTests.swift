import Foundation
import Testing
@testable import KeyVault
import TestSupport

/// The index's credential-id lookup (a secondary index: lookup value → partitions): a record
/// found by it costs its partition, not all of them; it stays exact through appends, compaction,
/// key rotation and a crash between the log and the index; and an index written without it (an
/// older index format) is never misread, but replaced.
final class VaultLookupTests {
    let directory: TemporaryDirectory
    var root: String { directory.path }
    var path: String { root + "/vault" }
    /// Partitions by field 1 (the "RP"), looks up by field 3 (the "credential id").
    static let partitioning = VaultPartitioning(kind: .credential, tag: 1, lookup: 3)

    init() throws {
        directory = try TemporaryDirectory("authctl-lookup-test")
    }

    func passphrase(_ text: String = "lookup") -> SecureBytes {
        var bytes = Array(text.utf8)
        return SecureBytes(consuming: &bytes)
    }

    func open(_ access: Vault.Access = .read, partitioning: VaultPartitioning? = VaultLookupTests.partitioning,
              passphrase text: String = "lookup") throws -> Vault {
        try Vault.open(at: path, passphrase: passphrase(text), access: access, partitioning: partitioning)
    }

    static func id(_ n: Int) -> [UInt8] { [UInt8(n >> 8), UInt8(n & 0xFF)] + [UInt8](repeating: 0xA5, count: 14) }
    static func credentialId(_ n: Int) -> [UInt8] { Array("cred-\(n)".utf8) }

    /// A revision `record` of credential `credential` of RP `rp`.
    static func revision(_ record: Int, credential: Int, rp: Int, version: UInt64 = 1) -> VaultRecord {
        VaultRecord(id: id(record), kind: .credential, version: version,
                    fields: [1: Array("rp\(rp).example".utf8), 2: Array("v\(version)".utf8), 3: credentialId(credential)])
    }

    /// What a vault read whole (no index) finds for credential `n`, by record id.
    func expected(_ n: Int, passphrase text: String = "lookup") throws -> [[UInt8]: VaultRecord] {
        let whole = try open(partitioning: nil, passphrase: text)
        let found = try whole.records(kind: .credential).filter { $0.field(3).map(Array.init) == Self.credentialId(n) }
        return Dictionary(found.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
    }

    func found(_ vault: Vault, _ n: Int) throws -> [[UInt8]: VaultRecord] {
        let found = try vault.records(kind: .credential, field: 3, equals: Self.credentialId(n))
        return Dictionary(found.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
    }

    /// 600 credentials over 60 RPs, each created in its own frame (so the index is written, then
    /// appended to), a third of them with a second revision.
    func populate(partitioning: VaultPartitioning = VaultLookupTests.partitioning) throws {
        let vault = try Vault.create(at: path, passphrase: passphrase(), kdf: .min, partitioning: partitioning)
        for n in 0..<600 {
            var batch = [Self.revision(n, credential: n, rp: n % 60)]
            if n % 3 == 0 { batch.append(Self.revision(10_000 + n, credential: n, rp: n % 60)) }
            try vault.commit(batch)
        }
    }

    @Test func aLookupReadsOnlyThePartitionThatHoldsTheCredential() throws {
        try populate()
        for n in [0, 1, 299, 599] {
            let vault = try open()
            let before = vault.partitionsRead
            let records = try found(vault, n)
            #expect(records == (try expected(n)))
            #expect(records.count == (n % 3 == 0 ? 2 : 1))
            // One partition (none for one made in the log after the index: it is in memory already;
            // the first ones are in the index, however often it was written since).
            let read = vault.partitionsRead - before
            #expect(n < 300 ? read == 1 : read <= 1, "credential \(n) read \(read) partitions")
        }
        // An id nobody has reads no partition at all.
        let vault = try open()
        #expect(try vault.records(kind: .credential, field: 3, equals: Array("nobody".utf8)).isEmpty)
        #expect(vault.partitionsRead == 0)
    }

    @Test func theLookupStaysExactThroughChangesCompactionAndKeyRotation() throws {
        try populate()
        var passphraseText = "lookup"
        var rng = SystemRandomNumberGenerator()
        var nextRecord = 20_000
        for round in 0..<6 {
            let vault = try open(.write, passphrase: passphraseText)
            for _ in 0..<40 {
                let n = Int.random(in: 0..<600, using: &rng)
                let existing = try found(vault, n)
                switch Int.random(in: 0..<4, using: &rng) {
                case 0:  // a new revision of it
                    try vault.commit([Self.revision(nextRecord, credential: n, rp: n % 60)])
                    nextRecord += 1
                case 1:  // a new version of one of its records
                    if let (_, r) = existing.first { try vault.commit([Self.revision(Int(r.id[0]) << 8 | Int(r.id[1]), credential: n, rp: n % 60, version: r.version + 1)]) }
                case 2:  // every record of it removed
                    try vault.commit(existing.values.map { VaultRecord(id: $0.id, kind: .tombstone, version: $0.version + 1) })
                default:  // a revision of it under another RP (an id is not bound to one partition)
                    try vault.commit([Self.revision(nextRecord, credential: n, rp: (n + 7) % 60)])
                    nextRecord += 1
                }
            }
            if round == 2 { try vault.compact() }
            if round == 4 {
                try vault.changePassphrase(to: passphrase("rotated"), kdf: .min, sealedFields: [:])
                passphraseText = "rotated"
                try vault.commit([Self.revision(nextRecord, credential: 5, rp: 5)])  // writes the new generation's index
                nextRecord += 1
            }
            // A fresh reader of every credential agrees with the vault read whole.
            for n in stride(from: 0, to: 600, by: 7) {
                let reader = try open(passphrase: passphraseText)
                #expect(try found(reader, n) == (try expected(n, passphrase: passphraseText)), "round \(round), credential \(n)")
            }
        }
        // After a compaction the lookup is written whole: exact again, one partition for an id in one.
        do {
            let vault = try open(.write, passphrase: passphraseText)
            try vault.compact()
        }
        let reader = try open(passphrase: passphraseText)
        #expect(try found(reader, 1) == (try expected(1, passphrase: passphraseText)))
        #expect(reader.partitionsRead <= 2)
    }

    @Test func aCrashBetweenTheLogAndTheIndexLosesNoLookup() throws {
        try populate()
        // Committed to the log, not yet in the index (the index follows 16 frames behind).
        do {
            let vault = try open(.write)
            try vault.commit([Self.revision(30_000, credential: 700, rp: 3)])
            try vault.commit([Self.revision(30_001, credential: 1, rp: 59)])  // an old id, in a new partition
        }
        // An index append that died before the commit file named it: bytes past its end.
        let indexPath = try VaultIndexTests.currentIndexPath(path)
        let handle = try #require(FileHandle(forWritingAtPath: indexPath))
        handle.seekToEndOfFile()
        handle.write(Data(repeating: 0x5A, count: 4_000))
        handle.closeFile()
        let reader = try open()
        #expect(try found(reader, 700).count == 1)
        #expect(try found(reader, 1) == (try expected(1)))
        #expect(try found(reader, 1).count == 2)
        // The next writer cuts the tail off, appends, and the lookups still hold.
        do {
            let vault = try open(.write)
            for k in 0..<20 { try vault.commit([Self.revision(31_000 + k, credential: 800 + k, rp: k)]) }
        }
        let after = try open()
        for n in [1, 700, 805, 819] { #expect(try found(after, n) == (try expected(n))) }
    }

    @Test func anIndexWithoutTheLookupIsNeverMisreadButReplaced() throws {
        // Written by a partitioning without a lookup tag: an index of the earlier format.
        try populate(partitioning: VaultPartitioning(kind: .credential, tag: 1))
        let oldIndex = try VaultIndexTests.currentIndexPath(path)
        let reader = try open()
        #expect(reader.index == nil)  // not used: read whole, nothing misread
        #expect(try found(reader, 9) == (try expected(9)))
        // The first writer replaces it with an index that has the lookup.
        do {
            let vault = try open(.write)
            try vault.commit([Self.revision(40_000, credential: 900, rp: 1)])
        }
        #expect(try VaultIndexTests.currentIndexPath(path) != oldIndex)
        let migrated = try open()
        #expect(migrated.index?.root.lookups != nil)
        #expect(try found(migrated, 9) == (try expected(9)))
        #expect(migrated.partitionsRead == 1)
    }

    @Test func aChangedLookupBucketIsCorruption() throws {
        try populate()
        let reader = try open()
        let table = try #require(reader.index?.root.lookups)
        let ref = table[VaultIndex.bucket(of: ByteKey(Self.credentialId(42)), count: table.count)]
        let indexPath = try VaultIndexTests.currentIndexPath(path)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: indexPath)))
        bytes[Int(ref.offset) + 30] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: indexPath))
        let damaged = try open()
        let error = #expect(throws: VaultError.self) { _ = try damaged.records(kind: .credential, field: 3, equals: Self.credentialId(42)) }
        #expect(error?.kind == .corrupted)
    }
}
