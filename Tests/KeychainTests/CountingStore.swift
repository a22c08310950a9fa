import Foundation
import Synchronization
import SyncStore
@testable import Keychain

/// The account stores at their paths, counted: every call an account makes of them, by kind —
/// what it reads (the log fetched, the snapshot, metadata, the extent) and what it writes
/// (appends, metadata set, compactions). Every account opened within ``counting(_:)`` uses, through
/// ``Account/storeHere``, the same directory store it would open by itself, behind a
/// ``CountedStore``.
final class StoreCounter: Sendable {
    struct Counts: Equatable, CustomStringConvertible {
        var fetches = 0, snapshots = 0, metadataReads = 0, extents = 0
        var appends = 0, metadataWrites = 0, compactions = 0

        var writes: Int { appends + metadataWrites + compactions }
        var description: String {
            "fetches \(fetches), snapshots \(snapshots), metadata reads \(metadataReads), extents \(extents); "
                + "appends \(appends), metadata writes \(metadataWrites), compactions \(compactions)"
        }
    }

    let counts = Mutex(Counts())

    /// What was counted since the last ``reset()``.
    var now: Counts { counts.withLock { $0 } }

    func reset() { counts.withLock { $0 = Counts() } }

    /// Runs `body` with every account it opens using the directory store at its path, counted.
    func counting<R>(_ body: () throws -> R) throws -> R {
        let override = Account.StoreOverride(open: { path in
            // Made when a writer first opens it (as it would make it); a reader finds it made.
            (try? DirectoryStore(path: path, create: !DirectoryStore.exists(at: path), durable: false)).map { CountedStore($0, self) }
        }, exists: { DirectoryStore.exists(at: $0) })
        return try Account.$storeHere.withValue(override) { try body() }
    }
}

/// A store whose calls a ``StoreCounter`` counts.
final class CountedStore: AccountStore, @unchecked Sendable {
    private let inner: any AccountStore
    private let counter: StoreCounter

    init(_ inner: any AccountStore, _ counter: StoreCounter) {
        self.inner = inner
        self.counter = counter
    }

    private func count(_ kind: WritableKeyPath<StoreCounter.Counts, Int>) { counter.counts.withLock { $0[keyPath: kind] += 1 } }

    func append(_ objects: [StoreObject]) throws(StoreError) -> [UInt64] {
        count(\.appends)
        return try inner.append(objects)
    }

    func changes(after cursor: UInt64, limit: Int) throws(StoreError) -> ChangePage {
        count(\.fetches)
        return try inner.changes(after: cursor, limit: limit)
    }

    func snapshot() throws(StoreError) -> StoreSnapshot? {
        count(\.snapshots)
        return try inner.snapshot()
    }

    func compact(through sequence: UInt64, snapshot parts: [StoreObject]) throws(StoreError) {
        count(\.compactions)
        try inner.compact(through: sequence, snapshot: parts)
    }

    func extent() throws(StoreError) -> StoreExtent {
        count(\.extents)
        return try inner.extent()
    }

    func metadata(_ keys: [String]) throws(StoreError) -> [String: StoreMetadata] {
        count(\.metadataReads)
        return try inner.metadata(keys)
    }

    @discardableResult
    func setMetadata(_ key: String, _ bytes: [UInt8], expecting expected: UInt64) throws(StoreError) -> UInt64 {
        count(\.metadataWrites)
        return try inner.setMetadata(key, bytes, expecting: expected)
    }
}

/// Every entry under `root`, by relative path: a file's bytes and modification time, a
/// directory's modification time (a file made and removed again changes it).
func treeState(_ root: String) throws -> [String: String] {
    var out = [String: String]()
    func stamp(_ path: String) throws -> String {
        var st = stat()
        guard lstat(path, &st) == 0 else { throw POSIXError(.ENOENT) }
        return "\(st.st_mode) \(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec) \(st.st_size)"
    }
    out["."] = try stamp(root)
    let fm = FileManager.default
    guard let walker = fm.enumerator(atPath: root) else { return out }
    for case let relative as String in walker {
        let path = root + "/" + relative
        var entry = try stamp(path)
        if !fm.isDirectory(path), let bytes = fm.contents(atPath: path) {
            entry += " " + bytes.base64EncodedString()
        }
        out[relative] = entry
    }
    return out
}

/// What differs between two ``treeState(_:)``s, named.
func treeChanges(_ before: [String: String], _ after: [String: String]) -> [String] {
    var out = Set(after.keys).subtracting(before.keys).sorted().map { "added \($0)" }
    out += Set(before.keys).subtracting(after.keys).sorted().map { "removed \($0)" }
    out += Set(before.keys).intersection(after.keys).sorted().filter { before[$0] != after[$0] }.map { "changed \($0)" }
    return out
}
