import Foundation
import SyncStore
import Testing

/// What every ``AccountStore`` must do, as one suite an implementation runs with a factory of its
/// own (DirectoryStoreTests runs it for ``DirectoryStore``; a store on a database server runs the
/// same checks). An implementation is done when every check passes.
struct AccountStoreContract: Sendable {
    /// Another client of the one store the check uses (a second device, a second process).
    let connect: @Sendable () throws -> any AccountStore
    /// Makes the store unreachable, then reachable again (a cloud that goes down and comes back).
    let takeAway: @Sendable () throws -> Void
    let bringBack: @Sendable () throws -> Void

    enum Check: String, CaseIterable, Sendable {
        case ordering, idempotentReupload, cursorsAndPaging, concurrentWriters, snapshotAndReadersBehindIt
        case metadataCompareAndSwap, disappearsAndComesBack, refusesWhatNoObjectCanBe
    }

    func run(_ check: Check) throws {
        switch check {
        case .ordering: try ordering()
        case .idempotentReupload: try idempotentReupload()
        case .cursorsAndPaging: try cursorsAndPaging()
        case .concurrentWriters: try concurrentWriters()
        case .snapshotAndReadersBehindIt: try snapshotAndReadersBehindIt()
        case .metadataCompareAndSwap: try metadataCompareAndSwap()
        case .disappearsAndComesBack: try disappearsAndComesBack()
        case .refusesWhatNoObjectCanBe: try refusesWhatNoObjectCanBe()
        }
    }

    static func object(_ name: String, _ size: Int = 16) -> StoreObject {
        StoreObject(id: Array(name.utf8), bytes: (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ name.utf8.count) })
    }

    /// Sequences strictly increase in the order objects were appended, across calls and clients,
    /// and the changes come back in that order with the bytes given.
    func ordering() throws {
        let store = try connect()
        #expect(try store.extent() == StoreExtent(snapshot: 0, head: 0))
        #expect(try store.changes(after: 0, limit: 10).changes.isEmpty)
        let first = try store.append([Self.object("a"), Self.object("b", 0), Self.object("c", 1000)])
        let second = try connect().append([Self.object("d")])
        #expect(first == [1, 2, 3] && second == [4])
        let page = try store.changes(after: 0, limit: 100)
        #expect(page.changes.map(\.sequence) == [1, 2, 3, 4])
        #expect(page.changes.map(\.object) == ["a", "b", "c", "d"].map { Self.object($0, $0 == "b" ? 0 : $0 == "c" ? 1000 : 16) })
        #expect(page.next == 4 && page.head == 4 && !page.hasMore && page.unreadable.isEmpty)
        #expect(try store.extent() == StoreExtent(snapshot: 0, head: 4))
    }

    /// Appending an id the store holds returns its first sequence and stores nothing — within a
    /// call, across calls, and from another client.
    func idempotentReupload() throws {
        let store = try connect()
        #expect(try store.append([Self.object("x"), Self.object("y")]) == [1, 2])
        #expect(try store.append([Self.object("y"), Self.object("z"), Self.object("x")]) == [2, 3, 1])
        #expect(try connect().append([Self.object("z"), Self.object("w"), Self.object("w")]) == [3, 4, 4])
        #expect(try store.changes(after: 0, limit: 100).changes.map(\.object.id) == ["x", "y", "z", "w"].map { Array($0.utf8) })
        #expect(try store.append([]) == [])
    }

    /// A page holds at most `limit` changes; its cursor continues exactly where it stopped, and a
    /// cursor past the end is refused.
    func cursorsAndPaging() throws {
        let store = try connect()
        _ = try store.append((0..<25).map { Self.object("p\($0)") })
        var cursor: UInt64 = 0, seen = [UInt64](), pages = 0
        repeat {
            let page = try store.changes(after: cursor, limit: 7)
            #expect(page.changes.count <= 7)
            seen += page.changes.map(\.sequence)
            cursor = page.next
            pages += 1
            if !page.hasMore { break }
        } while pages < 100
        #expect(seen == Array(1...25) && pages == 4)
        #expect(try store.changes(after: 25, limit: 7).changes.isEmpty)
        #expect(try store.changes(after: 20, limit: 7).changes.map(\.sequence) == Array(21...25))
        #expect(try store.allChanges(after: 3, pageSize: 4).changes.map(\.sequence) == Array(4...25))
        expectKind(.invalid) { _ = try store.changes(after: 26, limit: 7) }
    }

    /// Writers appending at once through clients of their own: every object gets exactly one
    /// sequence, none is lost or given twice, and each writer's objects keep its order.
    func concurrentWriters() throws {
        let writers = 4, perWriter = 30
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: writers) { writer in
            do {
                let store = try connect()
                for i in 0..<perWriter {
                    let batch = i % 3 == 0 ? [Self.object("w\(writer)-\(i)"), Self.object("w\(writer)-\(i)b")] : [Self.object("w\(writer)-\(i)")]
                    let given = try store.append(batch)
                    if given.count != batch.count || given != given.sorted() { failures.add("writer \(writer): \(given)") }
                }
            } catch { failures.add("writer \(writer): \(error)") }
        }
        #expect(failures.all.isEmpty, "\(failures.all)")
        let page = try connect().allChanges(after: 0)
        let expected = writers * (perWriter + (perWriter + 2) / 3)
        #expect(page.changes.map(\.sequence) == Array(1...UInt64(expected)))
        let ids = page.changes.map { String(decoding: $0.object.id, as: UTF8.self) }
        #expect(Set(ids).count == expected)
        for writer in 0..<writers {
            let mine = ids.filter { $0.hasPrefix("w\(writer)-") && !$0.hasSuffix("b") }
            #expect(mine == (0..<perWriter).map { "w\(writer)-\($0)" })
        }
    }

    /// A snapshot replaces the log up to its sequence: a new reader reads it and what followed; a
    /// reader whose cursor is older is told so; an old compaction loses to a newer one.
    func snapshotAndReadersBehindIt() throws {
        let store = try connect()
        #expect(try store.snapshot() == nil)
        _ = try store.append((1...10).map { Self.object("s\($0)") })
        let parts = [Self.object("snap-1", 3000), Self.object("snap-2", 0)]
        try store.compact(through: 8, snapshot: parts)
        #expect(try store.extent() == StoreExtent(snapshot: 8, head: 10))
        let reader = try connect()
        let snapshot = try #require(try reader.snapshot())
        #expect(snapshot.sequence == 8 && snapshot.parts == parts)
        #expect(try reader.changes(after: snapshot.sequence, limit: 10).changes.map(\.sequence) == [9, 10])
        expectKind(.behindSnapshot(snapshot: 8)) { _ = try reader.changes(after: 0, limit: 10) }
        expectKind(.behindSnapshot(snapshot: 8)) { _ = try reader.changes(after: 7, limit: 10) }
        expectKind(.conflict(current: 8)) { try store.compact(through: 5, snapshot: []) }
        expectKind(.invalid) { try store.compact(through: 11, snapshot: []) }
        // Appending continues after the head; re-uploading a compacted id stores nothing.
        #expect(try store.append([Self.object("s3"), Self.object("s11")]) == [3, 11])
        try connect().compact(through: 11, snapshot: [Self.object("snap-3")])
        #expect(try reader.snapshot()?.parts == [Self.object("snap-3")])
        #expect(try reader.changes(after: 11, limit: 10).changes.isEmpty)
    }

    /// Metadata changes only from the version the writer read: a second writer that read the same
    /// version loses with the current one, and nothing it wrote is kept.
    func metadataCompareAndSwap() throws {
        let a = try connect(), b = try connect()
        #expect(try a.metadata(["devices", "settings"]).isEmpty)
        #expect(try a.setMetadata("devices", [1, 2, 3], expecting: 0) == 1)
        expectKind(.conflict(current: 1)) { try b.setMetadata("devices", [9], expecting: 0) }
        #expect(try b.metadata(["devices"])["devices"] == StoreMetadata(version: 1, bytes: [1, 2, 3]))
        #expect(try b.setMetadata("devices", [4], expecting: 1) == 2)
        expectKind(.conflict(current: 2)) { try a.setMetadata("devices", [5], expecting: 1) }
        #expect(try a.setMetadata("settings", [], expecting: 0) == 1)
        let both = try a.metadata(["devices", "settings", "absent"])
        #expect(both == ["devices": StoreMetadata(version: 2, bytes: [4]), "settings": StoreMetadata(version: 1, bytes: [])])
        expectKind(.invalid) { _ = try a.metadata(["../state"]) }
        // Many writers racing from one version: exactly one wins each round.
        let wins = Failures()
        DispatchQueue.concurrentPerform(iterations: 4) { i in
            guard let store = try? connect() else { return }
            if (try? store.setMetadata("race", [UInt8(i)], expecting: 0)) != nil { wins.add("\(i)") }
        }
        #expect(wins.all.count == 1)
    }

    /// While the store is unreachable every call says so (`unavailable`); once back, it works and
    /// holds what it held.
    func disappearsAndComesBack() throws {
        let store = try connect()
        _ = try store.append([Self.object("before")])
        try store.setMetadata("devices", [1], expecting: 0)
        try takeAway()
        expectKind(.unavailable) { _ = try store.append([Self.object("during")]) }
        expectKind(.unavailable) { _ = try store.changes(after: 0, limit: 10) }
        expectKind(.unavailable) { _ = try store.metadata(["devices"]) }
        expectKind(.unavailable) { try store.setMetadata("devices", [2], expecting: 1) }
        expectKind(.unavailable) { _ = try store.extent() }
        try bringBack()
        #expect(try store.append([Self.object("during"), Self.object("before")]) == [2, 1])
        #expect(try store.changes(after: 0, limit: 10).changes.map(\.object.id) == [Array("before".utf8), Array("during".utf8)])
        #expect(try store.metadata(["devices"])["devices"]?.bytes == [1])
    }

    /// An object over the limit, or with an id no object can have, is refused before anything is
    /// stored.
    func refusesWhatNoObjectCanBe() throws {
        let store = try connect()
        expectKind(.tooLarge) { _ = try store.append([Self.object("ok"), StoreObject(id: [1], bytes: [UInt8](repeating: 0, count: DirectoryStore.objectLimit + 1))]) }
        expectKind(.invalid) { _ = try store.append([StoreObject(id: [], bytes: [1])]) }
        expectKind(.invalid) { _ = try store.append([StoreObject(id: [UInt8](repeating: 7, count: StoreObject.idLimit + 1), bytes: [1])]) }
        #expect(try store.extent().head == 0)
        #expect(try store.append([StoreObject(id: [1], bytes: [UInt8](repeating: 0, count: DirectoryStore.objectLimit))]) == [1])
    }
}

/// Expects `body` to throw a ``StoreError`` of `kind`.
func expectKind(_ kind: StoreError.Kind, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
    do {
        try body()
        Issue.record("expected a StoreError (\(kind)), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as StoreError {
        #expect(error.kind == kind, "\(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected a StoreError (\(kind)), got \(error)", sourceLocation: sourceLocation)
    }
}

/// Messages collected from several threads.
final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var items = [String]()
    func add(_ item: String) { lock.lock(); items.append(item); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return items }
}
