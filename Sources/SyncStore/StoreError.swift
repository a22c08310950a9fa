/// What can go wrong with an account store, whatever holds it (a directory, a database server).
/// The device library maps these to its own errors, by kind.
package struct StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    package enum Kind: Sendable, Equatable {
        /// The store cannot be reached or used now (missing, unreadable, held by another writer for
        /// too long, not a private directory of this user's): like a cloud that is down, it may
        /// work again later.
        case unavailable
        /// What the store holds does not read back as the store wrote it (damaged, truncated,
        /// planted).
        case corrupted
        /// A compare-and-swap lost: the metadata's version is `current`, not the one expected; or
        /// a compaction found the store already compacted past what it asked for.
        case conflict(current: UInt64)
        /// An object larger than one object can be.
        case tooLarge
        /// A reader's cursor is older than the store's snapshot, which replaced what came before:
        /// it rereads from the snapshot (at sequence `snapshot`).
        case behindSnapshot(snapshot: UInt64)
        /// A caller error: a malformed id or key, a cursor past the store's end.
        case invalid
    }

    package let kind: Kind
    package let message: String

    package init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    package var description: String { message }
}
