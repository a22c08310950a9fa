/// Where the devices of one account meet: the stand-in for the cloud, and the source of truth of
/// what every device learns from the others. It holds what devices upload — already sealed, so the
/// store sees only ciphertext — as an append-only log of change objects, each given a strictly
/// increasing sequence; a snapshot that can replace the log up to a sequence; and a few named
/// metadata values, changed by compare-and-swap.
///
/// Every call is a batch (several objects, a page of changes, several metadata keys), so an
/// implementation on a database server costs one round trip per call, not one per object; and
/// nothing assumes the store is a local directory. ``DirectoryStore`` is the embedded default.
/// An implementation is done when it passes the contract suite (Tests/SyncStoreTests).
package protocol AccountStore: AnyObject {
    /// Appends `objects` in order and returns the sequence each has. An object whose id the store
    /// already holds is not stored again: its first sequence is returned (an upload retried after
    /// a lost answer costs nothing).
    func append(_ objects: [StoreObject]) throws(StoreError) -> [UInt64]

    /// The changes after `cursor` (0: from the start), in sequence order, at most `limit` of them.
    /// A cursor older than the snapshot throws `behindSnapshot`: read ``snapshot()``, then the
    /// changes after its sequence.
    func changes(after cursor: UInt64, limit: Int) throws(StoreError) -> ChangePage

    /// The snapshot, when the log has been compacted: the objects that replaced everything up to
    /// its sequence.
    func snapshot() throws(StoreError) -> StoreSnapshot?

    /// Replaces every change up to `sequence` (at most the store's head) by `parts`, the
    /// snapshot. Another compaction that got there first is a `conflict`.
    func compact(through sequence: UInt64, snapshot parts: [StoreObject]) throws(StoreError)

    /// The store's extent: the snapshot's sequence (0 without one) and the last sequence given.
    func extent() throws(StoreError) -> StoreExtent

    /// The metadata under `keys` that exist.
    func metadata(_ keys: [String]) throws(StoreError) -> [String: StoreMetadata]

    /// Sets metadata `key` to `bytes` if its version is `expected` (0: it must not exist yet), and
    /// returns the new version; otherwise throws `conflict` with the current one.
    @discardableResult
    func setMetadata(_ key: String, _ bytes: [UInt8], expecting expected: UInt64) throws(StoreError) -> UInt64
}

/// An object to store: opaque (sealed) bytes and the id that makes re-uploading it idempotent.
package struct StoreObject: Sendable, Equatable {
    package let id: [UInt8]
    package let bytes: [UInt8]

    package init(id: [UInt8], bytes: [UInt8]) {
        self.id = id
        self.bytes = bytes
    }

    /// An id is 1 to 64 bytes.
    package static let idLimit = 64
}

/// One stored change: an object and the sequence the store gave it.
package struct StoreChange: Sendable, Equatable {
    package let sequence: UInt64
    package let object: StoreObject

    package init(sequence: UInt64, object: StoreObject) {
        self.sequence = sequence
        self.object = object
    }
}

/// A page of changes: what was read, the cursor to continue from, and the store's head then.
package struct ChangePage: Sendable {
    package var changes: [StoreChange]
    /// Changes in the page's range the store could not read back (damaged, planted): passed over,
    /// each with why. The cursor moves past them.
    package var unreadable: [UnreadableChange]
    /// The cursor after this page: the last sequence it covered.
    package var next: UInt64
    /// The last sequence the store had given when the page was read.
    package var head: UInt64

    /// Whether changes follow this page.
    package var hasMore: Bool { next < head }

    package init(changes: [StoreChange], unreadable: [UnreadableChange], next: UInt64, head: UInt64) {
        self.changes = changes
        self.unreadable = unreadable
        self.next = next
        self.head = head
    }
}

package struct UnreadableChange: Sendable, Equatable {
    package let sequence: UInt64
    package let reason: String

    package init(sequence: UInt64, reason: String) {
        self.sequence = sequence
        self.reason = reason
    }
}

/// What replaced the log up to `sequence`.
package struct StoreSnapshot: Sendable {
    package let sequence: UInt64
    package let parts: [StoreObject]

    package init(sequence: UInt64, parts: [StoreObject]) {
        self.sequence = sequence
        self.parts = parts
    }
}

package struct StoreExtent: Sendable, Equatable {
    /// The snapshot's sequence: changes up to it are only in the snapshot (0: no snapshot).
    package let snapshot: UInt64
    /// The last sequence given (0: nothing stored yet).
    package let head: UInt64

    package init(snapshot: UInt64, head: UInt64) {
        self.snapshot = snapshot
        self.head = head
    }
}

package struct StoreMetadata: Sendable, Equatable {
    package let version: UInt64
    package let bytes: [UInt8]

    package init(version: UInt64, bytes: [UInt8]) {
        self.version = version
        self.bytes = bytes
    }
}

extension AccountStore {
    /// Every change after `cursor`, page by page.
    package func allChanges(after cursor: UInt64, pageSize: Int = 256) throws(StoreError) -> ChangePage {
        var page = try changes(after: cursor, limit: pageSize)
        while page.hasMore {
            let next = try changes(after: page.next, limit: pageSize)
            page.changes += next.changes
            page.unreadable += next.unreadable
            page.next = next.next
            page.head = next.head
        }
        return page
    }
}
