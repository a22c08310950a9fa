import Foundation
import Testing
@testable import KeyVault
import TestSupport

private let rightPassphrase = "correct horse battery staple"

private func secure(_ text: String) -> SecureBytes {
    var bytes = Array(text.utf8)
    return SecureBytes(consuming: &bytes)
}

private func recordId(_ n: UInt8) -> [UInt8] { [UInt8](repeating: n, count: 16) }

private func record(_ n: UInt8, version: UInt64 = 1, note: String = "") -> VaultRecord {
    VaultRecord(id: recordId(n), kind: .credential, version: version, fields: [1: [n], 2: Array("record \(n)\(note)".utf8)])
}

private func tombstone(_ n: UInt8, version: UInt64) -> VaultRecord {
    VaultRecord(id: recordId(n), kind: .tombstone, version: version)
}

/// The byte ranges of the log's frames (length prefix and sealed body), as the format lays them out.
private func frameRanges(_ log: [UInt8]) -> [Range<Int>] {
    var ranges = [Range<Int>]()
    var offset = 0
    while offset + 4 <= log.count {
        let length = log[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
        ranges.append(offset..<offset + 4 + length)
        offset += 4 + length
    }
    return ranges
}

/// Each test gets a fresh directory from mkdtemp(3), removed when the test ends. A `Vault` holds
/// an flock on its directory for its whole life, so every helper lets its vault go before it returns.
final class VaultTests {
    let directory: TemporaryDirectory
    var root: String { directory.path }
    var path: String { root + "/vault" }

    init() throws {
        directory = try TemporaryDirectory("authctl-vault-test")
    }

    // MARK: Helpers

    /// Creates a vault, commits `commits` one frame each, and returns its records as the writer saw them.
    @discardableResult
    func create(at path: String? = nil, passphrase: String = rightPassphrase, commits: [[VaultRecord]] = []) throws -> [VaultRecord] {
        let vault = try Vault.create(at: path ?? self.path, passphrase: secure(passphrase), kdf: .min)
        for batch in commits { try vault.commit(batch) }
        return try vault.records
    }

    func withVault<R>(at path: String? = nil, passphrase: String = rightPassphrase, access: Vault.Access = .write,
                      _ body: (Vault) throws -> R) throws -> R {
        let vault = try Vault.open(at: path ?? self.path, passphrase: secure(passphrase), access: access)
        return try body(vault)
    }

    func records(at path: String? = nil, passphrase: String = rightPassphrase) throws -> [VaultRecord] {
        try withVault(at: path, passphrase: passphrase, access: .read) { try $0.records }
    }

    /// Opens a sealed secret in a new session of the vault at `path`.
    func openSecret(_ sealed: [UInt8], recordId: [UInt8], at path: String? = nil) throws -> [UInt8] {
        try withVault(at: path, access: .read) { try $0.openSecret(sealed, recordId: recordId).withUnsafeBytes { Array($0) } }
    }

    func expectVaultError<R>(_ kind: VaultError.Kind, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R) {
        let error = #expect(throws: VaultError.self, sourceLocation: sourceLocation) { _ = try body() }
        #expect(error?.kind == kind, sourceLocation: sourceLocation)
    }

    /// The kind of error opening the vault gives, or `nil` if it opens.
    func openErrorKind(at path: String? = nil) -> VaultError.Kind? {
        do {
            _ = try records(at: path)
            return nil
        } catch let error as VaultError {
            return error.kind
        } catch {
            return .io
        }
    }

    /// The vault's log file: the one directory entry named "log…" ("log.<generation>" today).
    func logName(in path: String? = nil) throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: path ?? self.path).filter { $0.hasPrefix("log") }
        return try #require(names.count == 1 ? names.first : nil, "log files: \(names)")
    }

    func read(_ name: String, in path: String? = nil) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: (path ?? self.path) + "/" + name)))
    }

    func write(_ name: String, _ bytes: [UInt8], in path: String? = nil) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: (path ?? self.path) + "/" + name))
    }

    /// Byte positions of `file` at which a flipped byte does not make opening fail as corrupted.
    func undetectedFlips(of file: String, at positions: [Int]) throws -> [Int] {
        let original = try read(file)
        defer { try? write(file, original) }
        var undetected = [Int]()
        for i in positions {
            var damaged = original
            damaged[i] ^= 0xFF
            try write(file, damaged)
            if openErrorKind() != .corrupted { undetected.append(i) }
        }
        return undetected
    }

    // MARK: Create and open

    /// A derived value is computed once and kept until a live record changes (a compaction changes
    /// none); a secret opened for one operation reads back what was sealed.
    @Test func derivedValuesLastUntilARecordChanges() throws {
        try create(commits: [[record(1)]])
        try withVault { vault in
            var computed = 0
            func count() throws(VaultError) -> Int {
                try vault.derived("count") { () throws(VaultError) -> Int in computed += 1; return try vault.records.count }
            }
            #expect(try count() == 1 && count() == 1 && computed == 1)
            try vault.commit([record(2)])
            #expect(try count() == 2 && computed == 2)
            try vault.commit([tombstone(1, version: 2)])
            #expect(try count() == 1 && computed == 3)
            try vault.compact()
            #expect(try count() == 1 && computed == 3)
            let sealed = [UInt8](repeating: 7, count: 121).withUnsafeBytes { vault.sealSecret($0, recordId: recordId(2)) }
            let opened = try vault.openSecret(sealed, recordId: recordId(2))
            #expect(opened.allocation == .transient && opened.count == 121)
            #expect(opened.withUnsafeBytes { Array($0) } == [UInt8](repeating: 7, count: 121))
        }
    }

    @Test func createThenOpenSeesCommittedRecordsInOrder() throws {
        let written = try create(commits: [[record(3)], [record(1), record(2)]])
        #expect(written == [record(3), record(1), record(2)])
        #expect(try records() == [record(3), record(1), record(2)])
        try withVault(access: .read) { (vault: Vault) throws in
            #expect(vault.committedFrames == 2)
            #expect(try vault.record(id: recordId(1)) == record(1))
            #expect(try vault.record(id: recordId(9)) == nil)
            #expect(vault.kdfLimits.opslimit == KDFLevel.min.opslimit)
        }
    }

    @Test func aNewerVersionReplacesARecordInPlace() throws {
        try create(commits: [[record(1), record(2)], [record(1, version: 2, note: " updated")]])
        #expect(try records() == [record(1, version: 2, note: " updated"), record(2)])
    }

    @Test func wrongPassphraseIsLocked() throws {
        try create(commits: [[record(1)]])
        expectVaultError(.locked) { try records(passphrase: "Correct horse battery staple") }
        expectVaultError(.locked) { try records(passphrase: "") }
        #expect(try records() == [record(1)])
    }

    @Test func secondCreateOnTheSameDirectoryIsExists() throws {
        try create(commits: [[record(1)]])
        expectVaultError(.exists) { try create() }
        expectVaultError(.exists) { try create(passphrase: "another") }
        #expect(try records() == [record(1)])
    }

    @Test func openOnAnEmptyDirectoryIsNotFound() {
        expectVaultError(.notFound) { try records(at: root) }
        expectVaultError(.notFound) { try records(at: root + "/missing") }
    }

    @Test func readOnlyVaultRefusesCommits() throws {
        try create()
        expectVaultError(.inconsistent) { try withVault(access: .read) { try $0.commit([record(1)]) } }
        #expect(try records() == [])
    }

    @Test func commitWithATombstoneRemovesTheRecord() throws {
        let written = try create(commits: [[record(1), record(2)], [tombstone(1, version: 2)]])
        #expect(written == [record(2)])
        #expect(try records() == [record(2)])
        #expect(try withVault { try $0.record(id: recordId(1)) } == nil)
    }

    /// A commit whose pointer cannot be written (here a directory planted at `commit.tmp`) fails
    /// with a named error and leaves every file as it was: the frame it had appended is cut off the
    /// log again, not left for the next writer to cut.
    @Test func aCommitWhosePointerCannotBeWrittenLeavesEveryFileAsItWas() throws {
        try create(commits: [[record(1)], [record(2)]])
        let names = try FileManager.default.contentsOfDirectory(atPath: path).sorted()
        let before = try names.map { try read($0) }
        try FileManager.default.createDirectory(atPath: path + "/commit.tmp", withIntermediateDirectories: false)
        expectVaultError(.io) { try withVault { try $0.commit([record(3)]) } }
        try FileManager.default.removeItem(atPath: path + "/commit.tmp")
        #expect(try FileManager.default.contentsOfDirectory(atPath: path).sorted() == names)
        #expect(try names.map { try read($0) } == before)
        #expect(try records() == [record(1), record(2)])
    }

    // MARK: Damage

    @Test func flippingAnyByteOfASealedFrameBodyIsCorruption() throws {
        try create(commits: [[record(1)], [record(2), record(3)]])
        let frames = frameRanges(try read(logName()))
        #expect(frames.count == 2)
        let bodies = frames.flatMap { Array($0.dropFirst(4)) }
        #expect(try undetectedFlips(of: logName(), at: bodies) == [])
        #expect(try records() == [record(1), record(2), record(3)])  // restored
    }

    @Test func flippingAnyByteOfAFrameLengthPrefixIsCorruption() throws {
        try create(commits: [[record(1)], [record(2), record(3)]])
        let prefixes = frameRanges(try read(logName())).flatMap { Array($0.prefix(4)) }
        #expect(prefixes.count == 8)
        #expect(try undetectedFlips(of: logName(), at: prefixes) == [])
    }

    @Test func flippingAnyByteOfTheHeaderIsCorruption() throws {
        try create(commits: [[record(1)]])
        let header = try read("header")
        #expect(header.count == VaultHeader.size)
        #expect(try undetectedFlips(of: "header", at: Array(header.indices)) == [])
    }

    @Test func flippingAnyByteOfTheCommitFileIsCorruption() throws {
        try create(commits: [[record(1)]])
        let commit = try read("commit")
        #expect(try undetectedFlips(of: "commit", at: Array(commit.indices)) == [])
    }

    /// How much of an appended frame reached the disk before the process died.
    enum TornTail: CaseIterable {
        case partOfTheLengthPrefix, theLengthPrefixOnly, partOfTheBody, allButOneByte, theWholeFrame

        func kept(of frame: Range<Int>) -> Int {
            switch self {
            case .partOfTheLengthPrefix: 2
            case .theLengthPrefixOnly: 4
            case .partOfTheBody: 30
            case .allButOneByte: frame.count - 1
            case .theWholeFrame: frame.count
            }
        }
    }

    /// A vault with record 1 acknowledged and an append of record 2 that never was: the log holds
    /// `tail` of frame 1, and the commit file is the one from before that append.
    func createWithUnacknowledgedAppend(_ tail: TornTail) throws {
        try create(commits: [[record(1)]])
        let acknowledged = try read("commit")
        try withVault { try $0.commit([record(2)]) }
        try write("commit", acknowledged)
        let log = try read(logName())
        let frame = try #require(frameRanges(log).last)
        try write(logName(), Array(log[..<(frame.lowerBound + tail.kept(of: frame))]))
    }

    @Test(arguments: TornTail.allCases)
    func unacknowledgedTrailingFrameIsIgnoredAndTheNextCommitWorks(tail: TornTail) throws {
        try createWithUnacknowledgedAppend(tail)
        #expect(try records() == [record(1)])
        try withVault { vault in
            #expect(vault.committedFrames == 1)
            try vault.commit([record(3)])
            #expect(try vault.records == [record(1), record(3)])
        }
        #expect(try records() == [record(1), record(3)])
        #expect(try withVault(access: .read) { $0.committedFrames } == 2)
        let log = try read(logName())
        #expect(frameRanges(log).last?.upperBound == log.count)  // the torn tail was cut off
    }

    @Test func cuttingAcknowledgedBytesOffTheLogIsCorruption() throws {
        try create(commits: [[record(1)], [record(2)]])
        let log = try read(logName())
        for cut in [1, 3, frameRanges(log)[1].count] {
            try write(logName(), Array(log.dropLast(cut)))
            expectVaultError(.corrupted) { try records() }
        }
    }

    @Test func aFrameFromAnotherVaultWithTheSamePassphraseIsCorruption() throws {
        let other = root + "/other"
        try create(commits: [[record(1)]])
        try create(at: other, commits: [[record(2)]])  // a frame of the same length
        let ownLog = try read(logName()), otherLog = try read(logName(in: other), in: other)
        #expect(ownLog.count == otherLog.count)

        try write(logName(), otherLog)  // in place of frame 0
        expectVaultError(.corrupted) { try records() }
        try write("commit", try read("commit", in: other))  // with its commit file too
        expectVaultError(.corrupted) { try records() }
    }

    @Test func aFrameFromAnotherVaultAppendedIsNeverApplied() throws {
        let other = root + "/other"
        try create(commits: [[record(1)]])
        try create(at: other, commits: [[record(2)]])
        try write(logName(), try read(logName()) + read(logName(in: other), in: other))
        // Past the acknowledged end it may be taken for an unfinished append, but never read.
        let seen = try? records()
        #expect(seen == nil || seen == [record(1)])
    }

    @Test func changedPassphraseOpensAndTheOldOneIsLocked() throws {
        try create(commits: [[record(1)]])
        try withVault { try $0.changePassphrase(to: secure("new passphrase"), kdf: nil, sealedFields: [:]) }
        expectVaultError(.locked) { try records() }
        #expect(try records(passphrase: "new passphrase") == [record(1)])
    }

    /// A record whose field 3 is a secret sealed in `vault`.
    private func recordWithSecret(_ n: UInt8, in vault: Vault, secret: [UInt8]) -> VaultRecord {
        var r = record(n)
        r.setField(3, secret.withUnsafeBytes { vault.sealSecret($0, recordId: r.id) })
        return r
    }

    @Test func aNewPassphraseBringsANewVaultKeySoAnOldHeaderOpensNothing() throws {
        let secret: [UInt8] = [7, 7, 7, 7]
        do {
            let vault = try Vault.create(at: path, passphrase: secure(rightPassphrase), kdf: .min)
            try vault.commit([recordWithSecret(1, in: vault, secret: secret), record(2)])
        }
        let oldHeader = try read("header")
        try withVault { vault in
            try vault.changePassphrase(to: secure("new passphrase"), kdf: nil, sealedFields: [.credential: [3]])
            try vault.commit([record(3)])  // written after the change, under the new key
        }
        // The new passphrase opens everything, the secret included, sealed again under the new key.
        let opened = try withVault(passphrase: "new passphrase", access: .read) { vault in
            (try vault.records.map(\.id), try vault.openSecret(Array(vault.record(id: recordId(1))!.field(3)!), recordId: recordId(1))
                .withUnsafeBytes { Array($0) })
        }
        #expect(opened.0 == [recordId(1), recordId(2), recordId(3)])
        #expect(opened.1 == secret)
        // The old header and the old passphrase: the vault key it unwraps opens nothing current.
        try write("header", oldHeader)
        #expect(openErrorKind() == .corrupted)
        expectVaultError(.locked) { try records(passphrase: "new passphrase") }
    }

    @Test func aKeyRotationInterruptedAnywhereLeavesTheOldVaultOrTheNewOne() throws {
        try create(commits: [[record(1)]])
        let before = try snapshot()
        try withVault { try $0.changePassphrase(to: secure("new passphrase"), kdf: nil, sealedFields: [:]) }
        let after = try snapshot()
        let newLog = try logName()
        // Stopped before the header was replaced: the old header, commit and log, plus the new
        // generation's log and commit.next. The old vault, whole.
        try restore(before)
        try write(newLog, after[newLog]!)
        try write("commit.next", after["commit"]!)
        #expect(try records() == [record(1)])
        try withVault { _ in }  // a writer tidies the leftovers away
        #expect(!FileManager.default.fileExists(atPath: path + "/commit.next"))
        #expect(!FileManager.default.fileExists(atPath: path + "/" + newLog))
        // Stopped after the header, before commit.next became commit: the new vault.
        try restore(before)
        try write("header", after["header"]!)
        try write(newLog, after[newLog]!)
        try write("commit.next", after["commit"]!)
        expectVaultError(.locked) { try records() }
        #expect(try records(passphrase: "new passphrase") == [record(1)])
        try withVault(passphrase: "new passphrase") { _ in }
        #expect(!FileManager.default.fileExists(atPath: path + "/commit.next"))
        #expect(try read("commit") == after["commit"]!)
    }

    /// Every file of the vault but the lock files, by name.
    private func snapshot() throws -> [String: [UInt8]] {
        var out = [String: [UInt8]]()
        for name in try FileManager.default.contentsOfDirectory(atPath: path) where !["lock", "writer"].contains(name) {
            out[name] = try read(name)
        }
        return out
    }

    /// Puts the directory back to `files` (lock files aside).
    private func restore(_ files: [String: [UInt8]]) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: path) where !["lock", "writer"].contains(name) {
            try FileManager.default.removeItem(atPath: path + "/" + name)
        }
        for (name, bytes) in files { try write(name, bytes) }
    }

    // MARK: Sequences of commits

    @Test func reAddingATombstonedIdListsItOnce() throws {
        let commits = [[record(1), record(2)], [tombstone(1, version: 2)], [record(1, version: 3)]]
        #expect(try create(commits: commits) == [record(2), record(1, version: 3)])
        #expect(try records() == [record(2), record(1, version: 3)])
    }

    @Test func compactionKeepsTheLiveRecordsInOrder() throws {
        try create(commits: [[record(1), record(2), record(3)], [tombstone(2, version: 2)], [record(1, version: 2)]])
        try withVault { try $0.compact() }
        #expect(try records() == [record(1, version: 2), record(3)])
        #expect(try withVault(access: .read) { $0.committedFrames } == 1)
        #expect(try logName() != "log.0")
    }

    @Test func compactionAfterReAddingATombstonedIdKeepsTheVaultReadable() throws {
        try create(commits: [[record(1)], [tombstone(1, version: 2)], [record(1, version: 3)]])
        try withVault { try $0.compact() }
        #expect(openErrorKind() == nil)
    }

    /// Batches that do not raise a record's version; the reader refuses those in the log.
    enum StaleBatch: CaseIterable {
        case sameVersionAgain, lowerVersion, sameIdTwiceInOneBatch, lowerVersionLaterInTheBatch

        var changes: [VaultRecord] {
            switch self {
            case .sameVersionAgain: [record(1, version: 2, note: " again")]
            case .lowerVersion: [record(1, version: 1)]
            case .sameIdTwiceInOneBatch: [record(2), record(2, note: " twice")]
            case .lowerVersionLaterInTheBatch: [record(2, version: 5), record(2, version: 4)]
            }
        }
    }

    @Test(arguments: StaleBatch.allCases)
    func everyCommitThatSucceedsLeavesAReadableVault(batch: StaleBatch) throws {
        try create(commits: [[record(1, version: 2)]])
        let outcome = Result { try withVault { try $0.commit(batch.changes) } }
        #expect(openErrorKind() == nil, "commit \(outcome) and then the vault does not open")
        if case .failure(let error as VaultError) = outcome { #expect(error.kind == .inconsistent) }
    }

    // MARK: Secrets

    @Test func onlyTheEnrolledPINUnlocksTheBiometryKey() throws {
        try create()
        try withVault { vault in
            let (enrollment, key) = try vault.enrollBiometry(pin: secure("4921"))
            #expect(try vault.unlockBiometry(pin: secure("4921"), enrollment) == key)
            #expect(try vault.unlockBiometry(pin: secure("4922"), enrollment) == nil)
            #expect(try vault.unlockBiometry(pin: secure("49211"), enrollment) == nil)
            // Re-enrolling with the same key under a new PIN keeps the key; the old PIN stops working.
            let (second, same) = try vault.enrollBiometry(pin: secure("7777"), keeping: key)
            #expect(same == key && second.salt != enrollment.salt)
            #expect(try vault.unlockBiometry(pin: secure("7777"), second) == key)
            #expect(try vault.unlockBiometry(pin: secure("4921"), second) == nil)
        }
    }

    @Test func aSecretSealedUnderTheBiometryKeyNeedsThatKey() throws {
        try create()
        try withVault { vault in
            let (_, key) = try vault.enrollBiometry(pin: secure("4921"))
            let (_, otherKey) = try vault.enrollBiometry(pin: secure("4921"))
            let secret: [UInt8] = Array("private key bytes".utf8)
            let sealed = secret.withUnsafeBytes { vault.sealSecret($0, recordId: recordId(1), biometryKey: key) }
            let opened = try vault.openSecret(sealed, recordId: recordId(1), biometryKey: key)
            #expect(opened.withUnsafeBytes { Array($0) } == secret)
            // The vault key alone yields only the inner ciphertext, never the secret.
            let outerOnly = try vault.openSecret(sealed, recordId: recordId(1)).withUnsafeBytes { Array($0) }
            #expect(outerOnly != secret && !outerOnly.contains(subsequence: secret))
            expectVaultError(.locked) { try vault.openSecret(sealed, recordId: recordId(1), biometryKey: otherKey) }
            expectVaultError(.corrupted) { try vault.openSecret(sealed, recordId: recordId(2), biometryKey: key) }
        }
    }

    @Test func sealedSecretsOpenOnlyUnderTheirRecordId() throws {
        let secret: [UInt8] = Array("-----private key DER-----".utf8)
        try create()
        let sealed = try withVault { vault in secret.withUnsafeBytes { vault.sealSecret($0, recordId: recordId(1)) } }
        #expect(sealed.count == 24 + secret.count + 16)
        #expect(try openSecret(sealed, recordId: recordId(1)) == secret)
        expectVaultError(.corrupted) { try openSecret(sealed, recordId: recordId(2)) }
        var damaged = sealed
        damaged[30] ^= 0x01
        expectVaultError(.corrupted) { try openSecret(damaged, recordId: recordId(1)) }
        expectVaultError(.corrupted) { try openSecret(Array(sealed.prefix(39)), recordId: recordId(1)) }
    }

    @Test func aSecretFromAnotherVaultDoesNotOpen() throws {
        let other = root + "/other"
        try create()
        try create(at: other)
        let sealed = try withVault(at: other) { vault in [UInt8]([1, 2, 3]).withUnsafeBytes { vault.sealSecret($0, recordId: recordId(1)) } }
        expectVaultError(.corrupted) { try openSecret(sealed, recordId: recordId(1)) }
    }
}

// MARK: - PIN verifier and secure bytes


@Test func secureBytesConsumingTakesTheBytesAndWipesTheSource() {
    var source: [UInt8] = [0xDE, 0xAD, 0xBE, 0xEF, 0x01]
    let secure = SecureBytes(consuming: &source)
    #expect(source == [0, 0, 0, 0, 0])
    #expect(secure.count == 5)
    #expect(secure.withUnsafeBytes { Array($0) } == [0xDE, 0xAD, 0xBE, 0xEF, 0x01])
}

@Test func secureBytesCompareByContent() {
    let a = [UInt8]([1, 2, 3]).withUnsafeBytes { SecureBytes(copying: $0) }
    let b = [UInt8]([1, 2, 3]).withUnsafeBytes { SecureBytes(copying: $0) }
    let c = [UInt8]([1, 2, 4]).withUnsafeBytes { SecureBytes(copying: $0) }
    #expect(a == b)
    #expect(a != c)
    #expect(a != a.prefix(2))
    #expect(a.prefix(2).withUnsafeBytes { Array($0) } == [1, 2])
}

extension Array where Element == UInt8 {
    func contains(subsequence: [UInt8]) -> Bool {
        guard subsequence.count <= count else { return false }
        return (0...(count - subsequence.count)).contains { self[$0..<$0 + subsequence.count].elementsEqual(subsequence) }
    }
}
