import Foundation
import Testing
@testable import KeyVault
import TestSupport

/// A held vault (``Vault/Sharing/held``, a scenario's): its process takes the locks once and
/// writes `commit` in place, yet what is on disk after every commit is an ordinary vault that a
/// normal open reads record for record; nobody else opens it while it is held; a failed write
/// leaves nothing the next commit trips on; compaction, the index and key rotation still work.
final class HeldVaultTests {
    let directory: TemporaryDirectory
    var root: String { directory.path }
    var path: String { root + "/vault" }
    static let partitioning = VaultPartitioning(kind: .credential, tag: 1)

    init() throws {
        directory = try TemporaryDirectory("authctl-held-test")
    }

    func secure(_ text: String) -> SecureBytes {
        var bytes = Array(text.utf8)
        return SecureBytes(consuming: &bytes)
    }

    func createHeld(partitioned: Bool = true) throws -> Vault {
        try Vault.create(at: path, passphrase: secure("held"), kdf: .min, partitioning: partitioned ? Self.partitioning : nil,
                         durability: .none, sharing: .held)
    }

    /// A passkey-like record of RP `rp` (field 1), its payload naming its version.
    static func credential(_ n: Int, rp: Int, version: UInt64 = 1) -> VaultRecord {
        VaultRecord(id: id(n), kind: .credential, version: version,
                    fields: [1: Array("rp-\(rp).example".utf8), 2: Array("version \(version) of \(n)".utf8)])
    }

    /// Record ids are 16 bytes: `n` in the last two.
    static func id(_ n: Int) -> [UInt8] { [UInt8](repeating: 0xC0, count: 14) + [UInt8(n >> 8), UInt8(n & 0xFF)] }

    static func tombstone(_ n: Int, version: UInt64) -> VaultRecord {
        VaultRecord(id: id(n), kind: .tombstone, version: version)
    }

    /// What the files on disk hold now, read as a process opening the vault reads them (the commit
    /// pointer, the index it names, the log after it, every partition), without taking the locks
    /// the held vault holds.
    func onDisk(_ vault: Vault, partitioned: Bool = true) throws -> [VaultRecord] {
        let reader = Vault(path: path, access: .read, header: vault.header, key: vault.key, waiting: Vault.Waiting(limit: .zero),
                           writerLock: nil, partitioning: partitioned ? Self.partitioning : nil)
        _ = try reader.readLog()
        try reader.verify()
        return try reader.records
    }

    /// Every file of the vault directory and its bytes.
    func files() throws -> [String: Data] {
        var out = [String: Data]()
        for name in try FileManager.default.contentsOfDirectory(atPath: path) {
            out[name] = try Data(contentsOf: URL(fileURLWithPath: path + "/" + name))
        }
        return out
    }

    func inode(_ name: String) -> UInt64 {
        var st = stat()
        return stat(path + "/" + name, &st) == 0 ? UInt64(st.st_ino) : 0
    }

    func expectVaultError(_ kind: VaultError.Kind, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
        let error = #expect(throws: VaultError.self, sourceLocation: sourceLocation) { try body() }
        #expect(error?.kind == kind, sourceLocation: sourceLocation)
    }

    /// Makes the next write through `fd` fail (EBADF): a read-only descriptor of the same file
    /// takes its number. The vault drops the descriptor when the write fails, closing it.
    func breakDescriptor(_ fd: Int32?, of name: String) throws {
        let fd = try #require(fd)
        let readOnly = open(path + "/" + name, O_RDONLY | O_CLOEXEC)
        #expect(readOnly >= 0)
        #expect(dup2(readOnly, fd) == fd)
        close(readOnly)
    }

    @Test func aHeldVaultIsAnOrdinaryVaultOnDiskAfterEveryCommit() throws {
        var expected = [VaultRecord]()
        do {
            let vault = try createHeld()
            #expect(vault.sharing == .held)
            for n in 0..<60 {
                var batch = [Self.credential(n, rp: n % 7)]
                if n % 5 == 4 { batch.append(Self.credential(n - 2, rp: (n - 2) % 7, version: 2)) }
                if n % 11 == 10 { batch.append(Self.tombstone(n - 10, version: 9)) }
                try vault.commit(batch)
                #expect(try onDisk(vault) == vault.records, "after commit \(n)")
            }
            #expect(vault.namedIndex == nil)  // no index after commits: a held vault is never opened again
            expected = try vault.records
        }
        #expect(!FileManager.default.fileExists(atPath: path + "/commit.tmp"))
        for partitioned in [true, false] {
            let reopened = try Vault.open(at: path, passphrase: secure("held"), access: .read,
                                          partitioning: partitioned ? Self.partitioning : nil)
            #expect(reopened.sharing == .shared)
            try reopened.verify()
            #expect(try reopened.records == expected)
        }
        // Opened again, it is an ordinary vault: a writer commits through a new `commit` file.
        let writer = try Vault.open(at: path, passphrase: secure("held"), access: .write, partitioning: Self.partitioning)
        try writer.commit([Self.credential(100, rp: 1)])
        #expect(try writer.records == expected + [Self.credential(100, rp: 1)])
    }

    @Test func aHeldVaultWritesItsCommitPointerInPlaceAndASharedOneReplacesIt() throws {
        let held = try createHeld()
        try held.commit([Self.credential(0, rp: 0)])
        let heldInode = inode("commit")
        for n in 1...5 { try held.commit([Self.credential(n, rp: 0)]) }
        #expect(inode("commit") == heldInode)
        #expect(try onDisk(held).count == 6)

        let sharedPath = root + "/shared"
        let shared = try Vault.create(at: sharedPath, passphrase: secure("held"), kdf: .min, durability: .none)
        var st = stat()
        stat(sharedPath + "/commit", &st)
        let before = st.st_ino
        try shared.commit([Self.credential(0, rp: 0)])
        stat(sharedPath + "/commit", &st)
        #expect(st.st_ino != before)
    }

    @Test func aSecondOpenerOfAHeldVaultIsBusyAndChangesNothing() throws {
        let vault = try createHeld()
        for n in 0..<20 { try vault.commit([Self.credential(n, rp: n % 3)]) }
        let before = try files()
        let noWait = Vault.Waiting(limit: .zero)
        for access in [Vault.Access.write, .read] {
            expectVaultError(.busy) {
                _ = try Vault.open(at: path, passphrase: secure("held"), access: access, waiting: noWait, partitioning: Self.partitioning)
            }
        }
        expectVaultError(.exists) { _ = try Vault.create(at: path, passphrase: secure("held"), kdf: .min, waiting: noWait) }
        expectVaultError(.busy) { try Vault.remove(at: path) }
        #expect(try files() == before)
        // The holder carries on as if nothing had happened.
        try vault.commit([Self.credential(20, rp: 0)])
        #expect(try onDisk(vault) == vault.records)
        #expect(try vault.records.count == 21)
    }

    @Test func aCommitAfterAFailedLogWriteCutsOffWhatTheFailureLeft() throws {
        do {
            let vault = try createHeld()
            for n in 0..<3 { try vault.commit([Self.credential(n, rp: 0)]) }
            let committed = try onDisk(vault)
            // What a write that went part of the way leaves after the committed end (the start of a
            // frame of 8,000 bytes), and the write failing.
            let log = try #require(FileHandle(forWritingAtPath: path + "/log.0"))
            try log.seekToEnd()
            try log.write(contentsOf: Data([0, 0, 0x1F, 0x40] + [UInt8](repeating: 0, count: 4096)))
            try log.close()
            try breakDescriptor(vault.held?.logDescriptor, of: "log.0")
            expectVaultError(.io) { try vault.commit([Self.credential(3, rp: 0)]) }
            #expect(try vault.records == committed)
            #expect(try onDisk(vault) == committed)
            try vault.commit([Self.credential(4, rp: 0)])
            #expect(try vault.records == committed + [Self.credential(4, rp: 0)])
            #expect(try onDisk(vault) == vault.records)
            #expect(vault.fileLength == vault.validLength)
            #expect(try files()["log.0"]?.count == vault.validLength)  // nothing past the committed end
        }
        let reopened = try Vault.open(at: path, passphrase: secure("held"), access: .write, partitioning: Self.partitioning)
        #expect(try reopened.records.map(\.id) == [0, 1, 2, 4].map { Self.credential($0, rp: 0).id })
    }

    @Test func aCommitAfterAFailedCommitPointerWriteLeavesTheVaultReadable() throws {
        do {
            let vault = try createHeld()
            for n in 0..<3 { try vault.commit([Self.credential(n, rp: 0)]) }
            let committed = try onDisk(vault)
            try breakDescriptor(vault.held?.commitDescriptor, of: "commit")
            // The frame reaches the log, the pointer does not move: the frame does not count.
            expectVaultError(.io) { try vault.commit([Self.credential(3, rp: 0)]) }
            #expect(try vault.records == committed)
            #expect(try onDisk(vault) == committed)
            #expect(vault.held?.commitDescriptor == nil)
            try vault.commit([Self.credential(4, rp: 0)])
            #expect(try onDisk(vault) == committed + [Self.credential(4, rp: 0)])
            // The pointer is kept open again and written in place from here on.
            let kept = inode("commit")
            #expect(vault.held?.commitDescriptor != nil)
            try vault.commit([Self.credential(5, rp: 0)])
            #expect(inode("commit") == kept)
            #expect(try onDisk(vault) == vault.records)
            #expect(try files()["log.0"]?.count == vault.validLength)
        }
        let reopened = try Vault.open(at: path, passphrase: secure("held"), access: .read)
        #expect(try reopened.records.map(\.id) == [0, 1, 2, 4, 5].map { Self.credential($0, rp: 0).id })
    }

    @Test func compactionIndexUpkeepAndKeyRotationKeepWorkingWhenHeld() throws {
        var expected = [VaultRecord]()
        do {
            let vault = try createHeld()
            // Few live records changed again and again: the log outgrows them and compacts itself,
            // and the index is written and appended to on the way.
            var versions = [Int: UInt64]()
            var generations = Set<UInt64>()
            for step in 0..<700 {
                let n = step % 9
                versions[n, default: 0] += 1
                try vault.commit([Self.credential(n, rp: n % 4, version: versions[n]!)])
                generations.insert(vault.generation)
                if step % 50 == 0 { #expect(try onDisk(vault) == vault.records, "step \(step)") }
            }
            #expect(generations.count >= 2, "compacted: \(generations.sorted())")
            #expect(try onDisk(vault) == vault.records)
            // Only the current generation's log and index are left, and they are what is read.
            let logs = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasPrefix("log.") || $0.hasPrefix("index.") }
            #expect(logs.sorted() == ["index.\(vault.generation)", "log.\(vault.generation)"])
            try vault.compact()
            try vault.commit([Self.credential(50, rp: 2)])
            #expect(try onDisk(vault) == vault.records)
            try vault.changePassphrase(to: secure("other"), kdf: .min, sealedFields: [:])
            #expect(!FileManager.default.fileExists(atPath: path + "/commit.next"))
            for n in 60..<90 { try vault.commit([Self.credential(n, rp: n % 4)]) }
            #expect(try onDisk(vault) == vault.records)
            expected = try vault.records
        }
        let reopened = try Vault.open(at: path, passphrase: secure("other"), access: .write, partitioning: Self.partitioning)
        try reopened.verify()
        #expect(try reopened.records == expected)
    }
}
