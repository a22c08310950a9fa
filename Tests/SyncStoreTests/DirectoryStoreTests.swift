import Foundation
import SyncStore
import Testing
import TestSupport

private func withStoreDirectory<T>(_ body: (String) throws -> T) throws -> T {
    try withTemporaryDirectory("syncstore", body)
}

private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
private func name(_ sequence: UInt64) -> String { String(format: "%016llx", sequence) }

/// ``DirectoryStore`` passes the contract every account store must pass.
@Test(arguments: AccountStoreContract.Check.allCases)
func directoryStorePassesTheContract(_ check: AccountStoreContract.Check) throws {
    try withStoreDirectory { dir in
        let path = dir + "/cloud"
        let contract = AccountStoreContract(
            connect: { try DirectoryStore(path: path, lockWait: .seconds(120)) },
            takeAway: { try FileManager.default.moveItem(atPath: path, toPath: dir + "/away") },
            bringBack: { try FileManager.default.moveItem(atPath: dir + "/away", toPath: path) })
        try contract.run(check)
    }
}

@Test func aKilledWritersObjectBeyondTheCounterIsNeverReadNorItsIdTrusted() throws {
    try withStoreDirectory { dir in
        let store = try DirectoryStore(path: dir + "/cloud")
        _ = try store.append([AccountStoreContract.object("kept")])
        // What a writer killed after writing its object and id, before moving the counter, leaves:
        // a whole object at sequence 2, its id pointing there, and a half-written temporary file.
        let scratch = try DirectoryStore(path: dir + "/scratch")
        _ = try scratch.append([AccountStoreContract.object("kept"), AccountStoreContract.object("torn")])
        try FileManager.default.copyItem(atPath: dir + "/scratch/log/" + name(2), toPath: dir + "/cloud/log/" + name(2))
        try FileManager.default.copyItem(atPath: dir + "/scratch/ids/" + hex(Array("torn".utf8)), toPath: dir + "/cloud/ids/" + hex(Array("torn".utf8)))
        #expect(FileManager.default.createFile(atPath: dir + "/cloud/log/." + name(3) + ".99.tmp", contents: Data([1, 2, 3])))
        #expect(try store.changes(after: 0, limit: 10).changes.map(\.object.id) == [Array("kept".utf8)])
        #expect(try store.extent().head == 1)
        // The next writer clears it: the torn id is stored anew, not taken as stored.
        #expect(try store.append([AccountStoreContract.object("other")]) == [2])
        #expect(try store.append([AccountStoreContract.object("torn")]) == [3])
        #expect(try store.changes(after: 0, limit: 10).changes.map { String(decoding: $0.object.id, as: UTF8.self) } == ["kept", "other", "torn"])
    }
}

@Test func aDamagedOrPlantedObjectIsReportedNotReturned() throws {
    try withStoreDirectory { dir in
        let store = try DirectoryStore(path: dir + "/cloud")
        _ = try store.append((1...5).map { AccountStoreContract.object("o\($0)") })
        let log = dir + "/cloud/log/"
        // Truncated; replaced by another sequence's object; a link; oversized; and a file planted
        // past the counter (never read).
        let two = try Data(contentsOf: URL(fileURLWithPath: log + name(2)))
        try two.prefix(two.count - 3).write(to: URL(fileURLWithPath: log + name(2)))
        try FileManager.default.removeItem(atPath: log + name(3))
        try FileManager.default.copyItem(atPath: log + name(1), toPath: log + name(3))
        try FileManager.default.removeItem(atPath: log + name(4))
        try FileManager.default.createSymbolicLink(atPath: log + name(4), withDestinationPath: log + name(1))
        try Data(count: DirectoryStore.objectLimit + 4096).write(to: URL(fileURLWithPath: log + name(5)))
        try two.write(to: URL(fileURLWithPath: log + name(9)))
        let page = try store.changes(after: 0, limit: 10)
        #expect(page.changes.map(\.sequence) == [1])
        #expect(page.unreadable.map(\.sequence) == [2, 3, 4, 5])
        #expect(page.unreadable[0].reason.contains("checksum"))
        #expect(page.unreadable[1].reason.contains("another sequence"))
        #expect(page.unreadable[2].reason.contains("symbolic link"))
        #expect(page.unreadable[3].reason.contains("more than"))
        #expect(page.next == 5)
    }
}

@Test func aStoreIsAPrivateDirectoryOfTheUsersNeverALink() throws {
    try withStoreDirectory { dir in
        try FileManager.default.createDirectory(atPath: dir + "/elsewhere", withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: dir + "/cloud", withDestinationPath: dir + "/elsewhere")
        expectKind(.unavailable) { _ = try DirectoryStore(path: dir + "/cloud") }
        try DirectoryStore.remove(at: dir + "/cloud")  // the link goes, not what it points to
        #expect(FileManager.default.fileExists(atPath: dir + "/elsewhere"))
        #expect(!DirectoryStore.exists(at: dir + "/cloud"))
        _ = try DirectoryStore(path: dir + "/cloud")
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: dir + "/cloud")
        expectKind(.unavailable) { _ = try DirectoryStore(path: dir + "/cloud") }
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: dir + "/cloud")
        try FileManager.default.removeItem(atPath: dir + "/cloud/log")
        try FileManager.default.createSymbolicLink(atPath: dir + "/cloud/log", withDestinationPath: dir + "/elsewhere")
        expectKind(.unavailable) { _ = try DirectoryStore(path: dir + "/cloud") }
        expectKind(.unavailable) { _ = try DirectoryStore(path: dir + "/missing", create: false) }
        #expect(FileManager.default.createFile(atPath: dir + "/file", contents: Data("x".utf8)))
        expectKind(.unavailable) { _ = try DirectoryStore(path: dir + "/file") }
    }
}

@Test func aDamagedCounterOrMetadataIsCorruptionNotAnEmptyStore() throws {
    try withStoreDirectory { dir in
        let store = try DirectoryStore(path: dir + "/cloud")
        _ = try store.append([AccountStoreContract.object("a")])
        try store.setMetadata("devices", [1, 2], expecting: 0)
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: dir + "/cloud/meta/devices"))
        expectKind(.corrupted) { _ = try store.metadata(["devices"]) }
        try Data(count: 32).write(to: URL(fileURLWithPath: dir + "/cloud/state"))
        expectKind(.corrupted) { _ = try store.changes(after: 0, limit: 1) }
        try FileManager.default.removeItem(atPath: dir + "/cloud/state")
        expectKind(.unavailable) { _ = try store.extent() }
    }
}

@Test func removingAStoreTakesItsFilesAndTheFirstLayoutsObjects() throws {
    try withStoreDirectory { dir in
        let store = try DirectoryStore(path: dir + "/cloud")
        _ = try store.append((1...3).map { AccountStoreContract.object("r\($0)") })
        try store.compact(through: 2, snapshot: [AccountStoreContract.object("snap")])
        try store.setMetadata("devices", [1], expecting: 0)
        try FileManager.default.createDirectory(atPath: dir + "/cloud/objects", withIntermediateDirectories: false)
        #expect(FileManager.default.createFile(atPath: dir + "/cloud/objects/" + String(repeating: "ab", count: 16), contents: Data([1])))
        #expect(DirectoryStore.hasLegacyObjects(at: dir + "/cloud"))
        try DirectoryStore.removeLegacyObjects(at: dir + "/cloud")
        #expect(!DirectoryStore.hasLegacyObjects(at: dir + "/cloud"))
        #expect(try store.changes(after: 2, limit: 5).changes.count == 1)
        try DirectoryStore.remove(at: dir + "/cloud")
        #expect(!FileManager.default.fileExists(atPath: dir + "/cloud"))
    }
}

@Test func aStoreWithoutFlushesIsTheSameStoreAndReopensDurable() throws {
    try withStoreDirectory { dir in
        do {
            let store = try DirectoryStore(path: dir + "/cloud", durable: false)
            #expect(try store.append((1...5).map { AccountStoreContract.object("n\($0)") }) == Array(1...5))
            try store.compact(through: 3, snapshot: [AccountStoreContract.object("snap")])
            try store.setMetadata("devices", [1], expecting: 0)
        }
        let reopened = try DirectoryStore(path: dir + "/cloud")
        #expect(reopened.durable)
        #expect(try reopened.snapshot()?.parts == [AccountStoreContract.object("snap")])
        #expect(try reopened.changes(after: 3, limit: 10).changes.map(\.sequence) == [4, 5])
        #expect(try reopened.metadata(["devices"])["devices"]?.bytes == [1])
    }
}

/// ``MemoryStore`` passes the same contract: one object every client shares, unavailable while
/// taken away.
@Test(arguments: AccountStoreContract.Check.allCases)
func memoryStorePassesTheContract(_ check: AccountStoreContract.Check) throws {
    let store = MemoryStore()
    let contract = AccountStoreContract(connect: { store }, takeAway: { store.isAvailable = false }, bringBack: { store.isAvailable = true })
    try contract.run(check)
}
