#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(ByteOrder) import ByteOrder

/// An ``AccountStore`` in a directory, the embedded default:
///
///     <store>/state              snapshot sequence ‖ head sequence (the counter), replaced by rename
///     <store>/lock               flock'd by writers: one appends, compacts or sets metadata at a time
///     <store>/log/<sequence>     one change object per file, named by 16 hex digits
///     <store>/ids/<object id>    the sequence an object id was given (idempotent re-upload)
///     <store>/snapshot/<sequence>/  the parts that replaced the log up to that sequence, and `count`
///     <store>/meta/<key>         a metadata value and its version
///
/// A change object is written to a temporary file, flushed and renamed into place before the
/// counter in `state` moves past it, so a reader — who reads only up to the counter — never sees
/// an object a killed writer left half written; the next writer removes what such a writer left
/// beyond the counter before it appends. Every file is framed with its kind, its sequence and a
/// checksum, so a damaged or planted one is reported, not returned as a change. The directory must
/// belong to the user and be writable by no one else; no link is followed; no file over
/// ``objectLimit`` (plus framing) is read.
package final class DirectoryStore: AccountStore {
    package let path: String
    /// The most an object's bytes can be (``StoreRules/objectLimit``).
    package static let objectLimit = StoreRules.objectLimit
    /// How long a writer waits for another to finish.
    let lockWait: Duration
    /// Whether what is written is flushed to disk before it is named and before the counter
    /// moves: `false` only for the store of a throw-away vault (a scenario's), where a crash
    /// loses nothing worth keeping.
    package let durable: Bool

    /// Opens the store at `path`; with `create`, makes it (0700) when it does not exist yet.
    package init(path: String, create: Bool = true, durable: Bool = true, lockWait: Duration = .seconds(60)) throws(StoreError) {
        self.path = path
        self.lockWait = lockWait
        self.durable = durable
        if create, !StoreFile.exists(path) { try StoreFile.makeDirectory(path, durable: durable) }
        try StoreFile.requirePrivateDirectory(path)
        for directory in [log, ids, snapshots, meta] {
            if create, !StoreFile.exists(directory) { try StoreFile.makeDirectory(directory, durable: durable) }
            try StoreFile.requirePrivateDirectory(directory)
        }
        if try readState() == nil {
            guard create else { throw StoreError(.unavailable, "\(path) holds no account store (its state file is missing)") }
            let lock = try StoreLock(path: path + "/lock", wait: lockWait)
            if try readState() == nil { try writeState(StoreExtent(snapshot: 0, head: 0)) }
            _ = lock
        }
    }

    private func syncDirectory(_ directory: String) throws(StoreError) {
        if durable { try StoreFile.syncDirectory(directory) }
    }

    private var log: String { path + "/log" }
    private var ids: String { path + "/ids" }
    private var snapshots: String { path + "/snapshot" }
    private var meta: String { path + "/meta" }

    /// Whether anything exists at `path` (a store, or something in its place).
    package static func exists(at path: String) -> Bool { StoreFile.exists(path) }

    /// Whether `path` is a directory itself, not a link to one: what else is there (a file, a
    /// link) is no store, and ``init(path:create:)`` refuses it as unavailable.
    package static func isDirectory(at path: String) -> Bool { StoreFile.isDirectory(path) }

    /// Whether `path` is a directory that is empty or holds only what a store keeps (its state,
    /// lock, log, ids, snapshot and metadata): somewhere a new store may be made.
    package static func isStore(at path: String) -> Bool {
        guard let dir = opendir(path) else { return false }
        defer { closedir(dir) }
        let known: Set<String> = [".", "..", "state", "lock", "log", "ids", "snapshot", "meta"]
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if !known.contains(name) { return false }
        }
        return true
    }

    // MARK: - The counter

    private static let stateMagic = Array("ASTSTAT1".utf8)

    /// The extent, or `nil` when there is no state file yet. A missing store is `unavailable`.
    private func readState() throws(StoreError) -> StoreExtent? {
        guard StoreFile.isDirectory(path) else { throw StoreError(.unavailable, "the account store at \(path) is missing") }
        guard let bytes = try StoreFile.read(path + "/state", limit: 64) else { return nil }
        guard bytes.count == 32, Array(bytes[0..<8]) == Self.stateMagic, StoreBytes.checksum(bytes[0..<24]) == Array(bytes[24...]) else {
            throw StoreError(.corrupted, "the account store's state file \(path)/state is damaged")
        }
        let extent = StoreExtent(snapshot: BigEndianBytes.integer(bytes[8..<16]), head: BigEndianBytes.integer(bytes[16..<24]))
        guard extent.snapshot <= extent.head else { throw StoreError(.corrupted, "the account store's state file \(path)/state is damaged") }
        return extent
    }

    private func state() throws(StoreError) -> StoreExtent {
        guard let state = try readState() else { throw StoreError(.unavailable, "the account store at \(path) has lost its state file") }
        return state
    }

    private func writeState(_ extent: StoreExtent) throws(StoreError) {
        var bytes = Self.stateMagic + BigEndianBytes.of(extent.snapshot) + BigEndianBytes.of(extent.head)
        bytes += StoreBytes.checksum(bytes[...])
        try StoreFile.replace(durable: durable, path + "/state", with: bytes)
        try syncDirectory(path)
    }

    package func extent() throws(StoreError) -> StoreExtent { try state() }

    // MARK: - Objects on disk

    private static let objectMagic = Array("ASTOBJ01".utf8)

    private static func frame(_ object: StoreObject, sequence: UInt64) -> [UInt8] {
        var bytes = objectMagic + BigEndianBytes.of(sequence) + [UInt8(object.id.count)] + object.id + object.bytes
        bytes += StoreBytes.checksum(bytes[...])
        return bytes
    }

    /// The object framed in `bytes`, checked against the sequence its file name says.
    private static func unframe(_ bytes: [UInt8], sequence: UInt64) -> Result<StoreObject, StoreError> {
        guard bytes.count >= 8 + 8 + 1 + 8, Array(bytes[0..<8]) == objectMagic else {
            return .failure(StoreError(.corrupted, "not a store object"))
        }
        guard StoreBytes.checksum(bytes[..<(bytes.count - 8)]) == Array(bytes[(bytes.count - 8)...]) else {
            return .failure(StoreError(.corrupted, "damaged or truncated (its checksum does not match)"))
        }
        guard BigEndianBytes.integer(bytes[8..<16]) as UInt64 == sequence else {
            return .failure(StoreError(.corrupted, "holds another sequence's object"))
        }
        let idCount = Int(bytes[16])
        guard (1...StoreObject.idLimit).contains(idCount), 17 + idCount <= bytes.count - 8 else {
            return .failure(StoreError(.corrupted, "not a store object"))
        }
        return .success(StoreObject(id: Array(bytes[17..<(17 + idCount)]), bytes: Array(bytes[(17 + idCount)..<(bytes.count - 8)])))
    }

    private static let fileLimit = objectLimit + 128

    private func readObject(_ file: String, sequence: UInt64) -> Result<StoreObject, StoreError>? {
        do {
            guard let bytes = try StoreFile.read(file, limit: Self.fileLimit) else { return nil }
            return Self.unframe(bytes, sequence: sequence)
        } catch { return .failure(error) }
    }

    // MARK: - Appending

    package func append(_ objects: [StoreObject]) throws(StoreError) -> [UInt64] {
        for object in objects { try StoreRules.check(object) }
        guard !objects.isEmpty else { return [] }
        let lock = try StoreLock(path: path + "/lock", wait: lockWait)
        defer { withExtendedLifetime(lock) {} }
        let extent = try state()
        try removeUncommitted(after: extent.head)
        var head = extent.head
        var given = [[UInt8]: UInt64]()
        var out = [UInt64]()
        for object in objects {
            var known = given[object.id]
            if known == nil { known = try storedSequence(of: object.id, head: extent.head) }
            if let known {
                out.append(known)
                continue
            }
            head += 1
            let file = log + "/" + StoreBytes.name(head)
            let temporary = log + "/.\(StoreBytes.name(head)).\(getpid()).tmp"
            try StoreFile.writeNew(durable: durable, temporary, Self.frame(object, sequence: head))
            try StoreFile.move(temporary, to: file)
            try StoreFile.replace(durable: durable, ids + "/" + StoreBytes.hex(object.id), with: Self.idEntry(head))
            given[object.id] = head
            out.append(head)
        }
        guard head > extent.head else { return out }
        try syncDirectory(log)
        try syncDirectory(ids)
        // The counter moves last: only now can a reader see the new objects.
        try writeState(StoreExtent(snapshot: extent.snapshot, head: head))
        return out
    }

    private static func idEntry(_ sequence: UInt64) -> [UInt8] {
        let bytes = BigEndianBytes.of(sequence)
        return bytes + StoreBytes.checksum(bytes[...])
    }

    /// The sequence object `id` was given, when it was committed (at most `head`).
    private func storedSequence(of id: [UInt8], head: UInt64) throws(StoreError) -> UInt64? {
        guard let bytes = try? StoreFile.read(ids + "/" + StoreBytes.hex(id), limit: 64), bytes.count == 16,
              StoreBytes.checksum(bytes[0..<8]) == Array(bytes[8...])
        else { return nil }
        let sequence: UInt64 = BigEndianBytes.integer(bytes[0..<8])
        return sequence >= 1 && sequence <= head ? sequence : nil
    }

    /// What a writer killed before moving the counter left beyond `head`: its objects and the ids
    /// it had noted for them. Nobody read them (readers stop at the counter).
    private func removeUncommitted(after head: UInt64) throws(StoreError) {
        var sequence = head + 1
        while case let found? = readObject(log + "/" + StoreBytes.name(sequence), sequence: sequence) {
            if case .success(let object) = found,
               let bytes = try? StoreFile.read(ids + "/" + StoreBytes.hex(object.id), limit: 64), bytes.count == 16,
               BigEndianBytes.integer(bytes[0..<8]) as UInt64 == sequence {
                try StoreFile.remove(ids + "/" + StoreBytes.hex(object.id))
            }
            try StoreFile.remove(log + "/" + StoreBytes.name(sequence))
            sequence += 1
        }
    }

    // MARK: - Reading

    package func changes(after cursor: UInt64, limit: Int) throws(StoreError) -> ChangePage {
        let extent = try state()
        guard cursor <= extent.head else {
            throw StoreError(.invalid, "cursor \(cursor) is past the account store's last change (\(extent.head))")
        }
        guard cursor >= extent.snapshot else {
            throw StoreError(.behindSnapshot(snapshot: extent.snapshot),
                             "the account store was compacted up to change \(extent.snapshot), past cursor \(cursor)")
        }
        let last = min(extent.head, cursor + UInt64(max(limit, 1)))
        var page = ChangePage(changes: [], unreadable: [], next: last, head: extent.head)
        guard last > cursor else { return page }
        for sequence in (cursor + 1)...last {
            switch readObject(log + "/" + StoreBytes.name(sequence), sequence: sequence) {
            case .success(let object)?: page.changes.append(StoreChange(sequence: sequence, object: object))
            case .failure(let error)?: page.unreadable.append(UnreadableChange(sequence: sequence, reason: error.message))
            case nil:
                // Gone: compacted away while this page was read, or lost.
                let now = try state()
                if now.snapshot >= sequence {
                    throw StoreError(.behindSnapshot(snapshot: now.snapshot),
                                     "the account store was compacted up to change \(now.snapshot) while it was read")
                }
                page.unreadable.append(UnreadableChange(sequence: sequence, reason: "missing"))
            }
        }
        return page
    }

    // MARK: - Snapshots

    package func snapshot() throws(StoreError) -> StoreSnapshot? {
        for _ in 0..<3 {
            let extent = try state()
            guard extent.snapshot > 0 else { return nil }
            if let parts = try readSnapshot(extent.snapshot) { return StoreSnapshot(sequence: extent.snapshot, parts: parts) }
            // Replaced by a newer one while it was read: read that.
            guard try state().snapshot != extent.snapshot else { break }
        }
        throw StoreError(.corrupted, "the account store's snapshot is missing or damaged")
    }

    private func readSnapshot(_ sequence: UInt64) throws(StoreError) -> [StoreObject]? {
        let directory = snapshots + "/" + StoreBytes.name(sequence)
        guard let countBytes = try StoreFile.read(directory + "/count", limit: 64) else { return nil }
        guard countBytes.count == 16, StoreBytes.checksum(countBytes[0..<8]) == Array(countBytes[8...]) else {
            throw StoreError(.corrupted, "the account store's snapshot \(directory) is damaged")
        }
        let count: UInt64 = BigEndianBytes.integer(countBytes[0..<8])
        var parts = [StoreObject]()
        for index in 0..<count {
            switch readObject(directory + "/" + StoreBytes.name(index), sequence: sequence) {
            case .success(let part)?: parts.append(part)
            case .failure(let error)?: throw StoreError(.corrupted, "part \(index) of the account store's snapshot is \(error.message)")
            case nil: return nil
            }
        }
        return parts
    }

    package func compact(through sequence: UInt64, snapshot parts: [StoreObject]) throws(StoreError) {
        for part in parts { try StoreRules.check(part) }
        let lock = try StoreLock(path: path + "/lock", wait: lockWait)
        defer { withExtendedLifetime(lock) {} }
        let extent = try state()
        guard sequence > extent.snapshot else {
            throw StoreError(.conflict(current: extent.snapshot), "the account store is already compacted up to change \(extent.snapshot)")
        }
        guard sequence <= extent.head else {
            throw StoreError(.invalid, "cannot compact up to change \(sequence): the store's last is \(extent.head)")
        }
        let name = StoreBytes.name(sequence)
        let temporary = snapshots + "/.\(name).\(getpid()).tmp"
        try removeTree(temporary)
        try StoreFile.makeDirectory(temporary, durable: durable)
        for (index, part) in parts.enumerated() {
            try StoreFile.writeNew(durable: durable, temporary + "/" + StoreBytes.name(UInt64(index)), Self.frame(part, sequence: sequence))
        }
        try StoreFile.writeNew(durable: durable, temporary + "/count", Self.idEntry(UInt64(parts.count)))
        try syncDirectory(temporary)
        try removeTree(snapshots + "/" + name)
        try StoreFile.move(temporary, to: snapshots + "/" + name)
        try syncDirectory(snapshots)
        try writeState(StoreExtent(snapshot: sequence, head: extent.head))
        // Replaced: the log up to the snapshot, and the snapshot before.
        if extent.snapshot < sequence {
            for old in (extent.snapshot + 1)...sequence { try StoreFile.remove(log + "/" + StoreBytes.name(old)) }
        }
        for entry in (try? StoreFile.listing(snapshots)) ?? [] where entry != name {
            try removeTree(snapshots + "/" + entry)
        }
    }

    /// Removes a directory the store made (its files, then itself); a link in its place goes
    /// itself, never followed.
    private func removeTree(_ directory: String) throws(StoreError) {
        guard StoreFile.exists(directory) else { return }
        guard StoreFile.isDirectory(directory) else { return try StoreFile.remove(directory) }
        for entry in try StoreFile.listing(directory) { try StoreFile.remove(directory + "/" + entry) }
        guard rmdir(directory) == 0 || errno == ENOENT else {
            throw StoreError(.unavailable, "cannot remove \(directory): \(StoreFile.errorText())")
        }
    }

    // MARK: - Metadata

    private static let metaMagic = Array("ASTMETA1".utf8)

    private func readMetadata(_ key: String) throws(StoreError) -> StoreMetadata? {
        try StoreRules.checkKey(key)
        guard let bytes = try StoreFile.read(meta + "/" + key, limit: Self.fileLimit) else { return nil }
        guard bytes.count >= 24, Array(bytes[0..<8]) == Self.metaMagic,
              StoreBytes.checksum(bytes[..<(bytes.count - 8)]) == Array(bytes[(bytes.count - 8)...])
        else { throw StoreError(.corrupted, "the account store's metadata '\(key)' is damaged") }
        return StoreMetadata(version: BigEndianBytes.integer(bytes[8..<16]), bytes: Array(bytes[16..<(bytes.count - 8)]))
    }

    package func metadata(_ keys: [String]) throws(StoreError) -> [String: StoreMetadata] {
        _ = try state()
        var out = [String: StoreMetadata]()
        for key in keys { out[key] = try readMetadata(key) }
        return out
    }

    @discardableResult
    package func setMetadata(_ key: String, _ bytes: [UInt8], expecting expected: UInt64) throws(StoreError) -> UInt64 {
        try StoreRules.checkKey(key)
        try StoreRules.checkMetadata(bytes)
        let lock = try StoreLock(path: path + "/lock", wait: lockWait)
        defer { withExtendedLifetime(lock) {} }
        _ = try state()
        let current = try readMetadata(key)?.version ?? 0
        guard current == expected else {
            throw StoreError(.conflict(current: current), "the account store's '\(key)' is at version \(current), not \(expected)")
        }
        var framed = Self.metaMagic + BigEndianBytes.of(current + 1) + bytes
        framed += StoreBytes.checksum(framed[...])
        try StoreFile.replace(durable: durable, meta + "/" + key, with: framed)
        try syncDirectory(meta)
        return current + 1
    }

    // MARK: - The store as a whole

    /// Whether `path` holds a store of the first layout (`objects/`, one file per upload named by
    /// random hex), which this version does not read: the devices' vault holds all it held, and
    /// uploads it again.
    package static func hasLegacyObjects(at path: String) -> Bool { StoreFile.exists(path + "/objects") }

    /// Removes the first layout's `objects/` (see ``hasLegacyObjects(at:)``).
    package static func removeLegacyObjects(at path: String) throws(StoreError) {
        let objects = path + "/objects"
        guard StoreFile.exists(objects) else { return }
        guard StoreFile.isDirectory(objects) else { return try StoreFile.remove(objects) }
        for entry in try StoreFile.listing(objects) { try StoreFile.remove(objects + "/" + entry) }
        guard rmdir(objects) == 0 || errno == ENOENT else {
            throw StoreError(.unavailable, "cannot remove \(objects): \(StoreFile.errorText())")
        }
    }

    /// Deletes the store at `path`: the files of its layout, then its directories if that empties
    /// them. A file or link in its place goes itself; a link is never followed.
    package static func remove(at path: String) throws(StoreError) {
        guard StoreFile.exists(path) else { return }
        guard StoreFile.isDirectory(path) else { return try StoreFile.remove(path) }
        try StoreFile.requirePrivateDirectory(path)
        try removeLegacyObjects(at: path)
        let store = path
        func clear(_ directory: String) throws(StoreError) {
            guard StoreFile.exists(directory) else { return }
            guard StoreFile.isDirectory(directory) else { return try StoreFile.remove(directory) }
            for entry in try StoreFile.listing(directory) {
                let inner = directory + "/" + entry
                if StoreFile.isDirectory(inner) { try clear(inner) } else { try StoreFile.remove(inner) }
            }
            rmdir(directory)
        }
        for directory in ["log", "ids", "snapshot", "meta"] { try clear(store + "/" + directory) }
        for file in ["state", "lock"] { try StoreFile.remove(store + "/" + file) }
        for entry in (try? StoreFile.listing(store)) ?? [] where entry.hasPrefix("state.") && entry.hasSuffix(".tmp") {
            try StoreFile.remove(store + "/" + entry)
        }
        rmdir(store)
    }
}
