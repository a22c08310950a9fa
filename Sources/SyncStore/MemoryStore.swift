import Synchronization

/// An ``AccountStore`` in this process's memory: for a throw-away account that no other process
/// reads and that is gone when the process ends (a scenario's, docs/scenarios.md). It keeps the
/// contract every store keeps — sequences, idempotent ids, pages, snapshots, compare-and-swap
/// metadata, the same refusals — with no file behind it, so syncing costs what the sync itself
/// computes. Every client of the store is this one object; its calls may come from any thread.
package final class MemoryStore: AccountStore, Sendable {
    private struct Contents {
        var changes = [StoreChange]()  // after the snapshot, in sequence order
        var head: UInt64 = 0
        var snapshot: StoreSnapshot?
        var sequenceOfId = [[UInt8]: UInt64]()
        var metadata = [String: StoreMetadata]()
        var available = true
    }

    private let contents = Mutex(Contents())

    package init() {}

    /// Whether calls reach the store: `false` makes every call `unavailable` (a cloud that is
    /// down) until it is `true` again; what it held is kept.
    package var isAvailable: Bool {
        get { contents.withLock { $0.available } }
        set { contents.withLock { $0.available = newValue } }
    }

    /// Whether anything was ever stored in it (a change or a metadata value): what makes a
    /// directory store exist.
    package var holdsAnything: Bool {
        contents.withLock { $0.head > 0 || !$0.metadata.isEmpty }
    }

    private func withContents<T>(_ body: (inout Contents) throws(StoreError) -> T) throws(StoreError) -> T {
        try contents.withLock { (c: inout Contents) throws(StoreError) -> T in
            guard c.available else { throw StoreError(.unavailable, "the account store in memory is unavailable") }
            return try body(&c)
        }
    }

    package func append(_ objects: [StoreObject]) throws(StoreError) -> [UInt64] {
        for object in objects { try StoreRules.check(object) }
        return try withContents { (c: inout Contents) throws(StoreError) in
            objects.map { object in
                if let known = c.sequenceOfId[object.id] { return known }
                c.head += 1
                c.sequenceOfId[object.id] = c.head
                c.changes.append(StoreChange(sequence: c.head, object: object))
                return c.head
            }
        }
    }

    package func changes(after cursor: UInt64, limit: Int) throws(StoreError) -> ChangePage {
        try withContents { (c: inout Contents) throws(StoreError) in
            guard cursor <= c.head else {
                throw StoreError(.invalid, "cursor \(cursor) is past the account store's last change (\(c.head))")
            }
            let snapshot = c.snapshot?.sequence ?? 0
            guard cursor >= snapshot else {
                throw StoreError(.behindSnapshot(snapshot: snapshot), "the account store was compacted up to change \(snapshot), past cursor \(cursor)")
            }
            let last = min(c.head, cursor + UInt64(max(limit, 1)))
            // The kept changes are every sequence after the snapshot, in order: found by offset.
            let first = c.changes.first?.sequence ?? (c.head + 1)
            let from = Int(cursor + 1 - min(cursor + 1, first)), to = Int(last + 1 - min(last + 1, first))
            return ChangePage(changes: from < to ? Array(c.changes[from..<to]) : [], unreadable: [], next: last, head: c.head)
        }
    }

    package func snapshot() throws(StoreError) -> StoreSnapshot? {
        try withContents { $0.snapshot }
    }

    package func compact(through sequence: UInt64, snapshot parts: [StoreObject]) throws(StoreError) {
        for part in parts { try StoreRules.check(part) }
        try withContents { (c: inout Contents) throws(StoreError) in
            let current = c.snapshot?.sequence ?? 0
            guard sequence > current else {
                throw StoreError(.conflict(current: current), "the account store is already compacted up to change \(current)")
            }
            guard sequence <= c.head else {
                throw StoreError(.invalid, "cannot compact up to change \(sequence): the store's last is \(c.head)")
            }
            c.snapshot = StoreSnapshot(sequence: sequence, parts: parts)
            c.changes.removeFirst(c.changes.prefix { $0.sequence <= sequence }.count)
        }
    }

    package func extent() throws(StoreError) -> StoreExtent {
        try withContents { StoreExtent(snapshot: $0.snapshot?.sequence ?? 0, head: $0.head) }
    }

    package func metadata(_ keys: [String]) throws(StoreError) -> [String: StoreMetadata] {
        try withContents { (c: inout Contents) throws(StoreError) in
            var out = [String: StoreMetadata]()
            for key in keys {
                try StoreRules.checkKey(key)
                out[key] = c.metadata[key]
            }
            return out
        }
    }

    @discardableResult
    package func setMetadata(_ key: String, _ bytes: [UInt8], expecting expected: UInt64) throws(StoreError) -> UInt64 {
        try StoreRules.checkKey(key)
        try StoreRules.checkMetadata(bytes)
        return try withContents { (c: inout Contents) throws(StoreError) in
            let current = c.metadata[key]?.version ?? 0
            guard current == expected else {
                throw StoreError(.conflict(current: current), "the account store's '\(key)' is at version \(current), not \(expected)")
            }
            c.metadata[key] = StoreMetadata(version: current + 1, bytes: bytes)
            return current + 1
        }
    }
}
