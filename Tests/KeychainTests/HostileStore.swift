import Foundation
import Synchronization
import SyncStore
@testable import Keychain

/// An account store that keeps the store contract while it is honest, and does on command what a
/// store can do that it must not: go back to an earlier copy of itself (a restore, a failover),
/// lose a change and give its number again, renumber or reorder its changes, drop or add a part of
/// its snapshot, replace metadata by bytes that do not open. Every vault of a test opens this one
/// object (``Account/storeHere``), as machines would share a server.
final class HostileStore: AccountStore, @unchecked Sendable {
    struct Contents {
        var changes = [StoreChange]()  // after the snapshot, by sequence
        var head: UInt64 = 0
        var snapshot: StoreSnapshot?
        var sequenceOfId = [[UInt8]: UInt64]()
        var metadata = [String: StoreMetadata]()
        var spoiling = false
    }

    private let contents = Mutex(Contents())

    /// A copy of everything it holds now, to go back to.
    func copy() -> Contents { contents.withLock { $0 } }

    /// Everything as it was in `earlier`: a restore from a backup, or a replica that missed what came after.
    func restore(_ earlier: Contents) { contents.withLock { $0 = earlier } }

    /// Its log and snapshot as in `earlier`, its metadata as now.
    func restoreLog(_ earlier: Contents) {
        contents.withLock { c in
            let metadata = c.metadata
            c = earlier
            c.metadata = metadata
        }
    }

    /// Metadata `key` as in `earlier` (absent if it was), the rest as now.
    func restoreMetadata(_ key: String, from earlier: Contents) {
        contents.withLock { $0.metadata[key] = earlier.metadata[key] }
    }

    /// Change `sequence` removed, and every later one numbered one less: the next append reuses
    /// the last number.
    func removeAndRenumber(_ sequence: UInt64) {
        contents.withLock { c in
            c.changes = c.changes.filter { $0.sequence != sequence }.map {
                $0.sequence > sequence ? StoreChange(sequence: $0.sequence - 1, object: $0.object) : $0
            }
            c.head -= 1
            c.sequenceOfId = Dictionary(c.changes.map { ($0.object.id, $0.sequence) }, uniquingKeysWith: { a, _ in a })
        }
    }

    /// The last change removed, and its number given to the next append.
    func removeLast() {
        contents.withLock { c in
            guard let last = c.changes.popLast() else { return }
            c.sequenceOfId[last.object.id] = nil
            c.head -= 1
        }
    }

    /// The next object appended is acknowledged — given its sequence, the head moved past it — but
    /// kept empty, as a store that lost its bytes would keep it; and a stray change (one no vault
    /// made, that does not open) takes the sequence before it, as another writer's append would,
    /// so its maker reads it back with the stray and does not find it changed.
    func spoilNextAppend() { contents.withLock { $0.spoiling = true } }

    /// Changes `a` and `b` swap places.
    func swap(_ a: UInt64, _ b: UInt64) {
        contents.withLock { c in
            guard let i = c.changes.firstIndex(where: { $0.sequence == a }), let j = c.changes.firstIndex(where: { $0.sequence == b }) else { return }
            let first = c.changes[i].object
            c.changes[i] = StoreChange(sequence: a, object: c.changes[j].object)
            c.changes[j] = StoreChange(sequence: b, object: first)
        }
    }

    /// The snapshot's parts `which` keeps; `extra` added.
    func editSnapshot(keeping which: (Int, StoreObject) -> Bool, adding extra: [StoreObject] = []) {
        contents.withLock { c in
            guard let s = c.snapshot else { return }
            let kept = s.parts.enumerated().filter { which($0.offset, $0.element) }.map(\.element)
            c.snapshot = StoreSnapshot(sequence: s.sequence, parts: kept + extra)
        }
    }

    var snapshotParts: [StoreObject] { contents.withLock { $0.snapshot?.parts ?? [] } }

    /// Metadata `key` replaced by `bytes`, at the next version.
    func overwrite(_ key: String, with bytes: [UInt8]) {
        contents.withLock { c in
            c.metadata[key] = StoreMetadata(version: (c.metadata[key]?.version ?? 0) + 1, bytes: bytes)
        }
    }

    var extentNow: StoreExtent { contents.withLock { StoreExtent(snapshot: $0.snapshot?.sequence ?? 0, head: $0.head) } }
    var holdsAnything: Bool { contents.withLock { $0.head > 0 || !$0.metadata.isEmpty } }

    // MARK: - The contract

    func append(_ objects: [StoreObject]) throws(StoreError) -> [UInt64] {
        contents.withLock { c in
            objects.map { object in
                if let known = c.sequenceOfId[object.id] { return known }
                var kept = object
                if c.spoiling {
                    c.spoiling = false
                    c.head += 1
                    c.changes.append(StoreChange(sequence: c.head, object: StoreObject(id: RandomSource.live.bytes(16), bytes: RandomSource.live.bytes(64))))
                    kept = StoreObject(id: object.id, bytes: [])
                }
                c.head += 1
                c.sequenceOfId[object.id] = c.head
                c.changes.append(StoreChange(sequence: c.head, object: kept))
                return c.head
            }
        }
    }

    func changes(after cursor: UInt64, limit: Int) throws(StoreError) -> ChangePage {
        try contents.withLock { (c: inout Contents) throws(StoreError) -> ChangePage in
            guard cursor <= c.head else { throw StoreError(.invalid, "cursor \(cursor) is past the store's last change (\(c.head))") }
            let snapshot = c.snapshot?.sequence ?? 0
            guard cursor >= snapshot else { throw StoreError(.behindSnapshot(snapshot: snapshot), "compacted up to \(snapshot)") }
            let last = min(c.head, cursor + UInt64(max(limit, 1)))
            let page = c.changes.filter { $0.sequence > cursor && $0.sequence <= last }.sorted { $0.sequence < $1.sequence }
            return ChangePage(changes: page, unreadable: [], next: last, head: c.head)
        }
    }

    func snapshot() throws(StoreError) -> StoreSnapshot? { contents.withLock { $0.snapshot } }

    func compact(through sequence: UInt64, snapshot parts: [StoreObject]) throws(StoreError) {
        try contents.withLock { (c: inout Contents) throws(StoreError) in
            let current = c.snapshot?.sequence ?? 0
            guard sequence > current else { throw StoreError(.conflict(current: current), "already compacted up to \(current)") }
            guard sequence <= c.head else { throw StoreError(.invalid, "cannot compact past \(c.head)") }
            c.snapshot = StoreSnapshot(sequence: sequence, parts: parts)
            c.changes.removeAll { $0.sequence <= sequence }
        }
    }

    func extent() throws(StoreError) -> StoreExtent { extentNow }

    func metadata(_ keys: [String]) throws(StoreError) -> [String: StoreMetadata] {
        contents.withLock { c in Dictionary(keys.compactMap { k in c.metadata[k].map { (k, $0) } }, uniquingKeysWith: { a, _ in a }) }
    }

    @discardableResult
    func setMetadata(_ key: String, _ bytes: [UInt8], expecting expected: UInt64) throws(StoreError) -> UInt64 {
        try contents.withLock { (c: inout Contents) throws(StoreError) -> UInt64 in
            let current = c.metadata[key]?.version ?? 0
            guard current == expected else { throw StoreError(.conflict(current: current), "'\(key)' is at version \(current)") }
            c.metadata[key] = StoreMetadata(version: current + 1, bytes: bytes)
            return current + 1
        }
    }

    /// Runs `body` with every account it opens using this store.
    func serving<R>(_ body: () throws -> R) throws -> R {
        try Account.$storeHere.withValue(Account.StoreOverride(open: { _ in self }, exists: { _ in self.holdsAnything })) {
            try body()
        }
    }
}
