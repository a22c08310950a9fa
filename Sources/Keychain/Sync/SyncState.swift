import KeyVault

/// This vault's place in the account store, one record (kind 4, docs/vault-format.md): which
/// store it follows (the store's id), how far it has read the store's changes (the cursor), what
/// its devices made that has not been uploaded yet (the upload queue, found from each commit, so a
/// writer never scans the vault for it), and the store's changes it could not read.
struct SyncState {
    static let kind = VaultRecord.Kind(rawValue: 4)
    static let recordId = Array("AUTHCTL-SYNCSTAT".utf8)

    enum Tag {
        static let cursor: UInt8 = 1, storeId: UInt8 = 2, queue: UInt8 = 3, snapshotEntries: UInt8 = 4
        static let unreadable: UInt8 = 5, format: UInt8 = 6
    }

    /// The record's format: tag 6, absent in records written before it (format 1). A writer
    /// rewrites the whole record from what it read, so one that does not know a newer format would
    /// drop what that format added: a newer format is refused (`tooNew`) instead, at open.
    static let format: UInt64 = 1

    /// Refuses a vault whose sync state record is of a format newer than ``format``; called as the
    /// vault opens, before anything reads the record or writes.
    static func requireKnownFormat(in vault: Vault) throws(VaultError) {
        guard let record = try vault.records(kind: kind).first(where: { $0.id == recordId }) else { return }
        let found = try record.integer(Tag.format, as: UInt64.self) ?? 1
        guard found <= format else {
            throw VaultError(.tooNew, "the vault's sync state is format \(found), newer than this authctl reads (format \(format)): open it with a newer authctl; nothing was changed")
        }
    }

    /// A revision of this vault waiting to upload: its id, its RP ID (the partition it is read
    /// from), and when it lands, once known (`nil` while its device is offline).
    struct Upload: Equatable {
        let revisionId: [UInt8]
        let rpId: [UInt8]
        let landsAt: Instant?
    }

    var version: UInt64 = 0
    var storeId: [UInt8] = []
    var cursor: UInt64 = 0
    var queue: [Upload] = []
    /// How many revisions the last snapshot this vault read or made held: compaction waits for
    /// a share of that many changes, so it costs a constant per change.
    var snapshotEntries: UInt64 = 0
    var unreadable: [StoreState.UnreadableObject] = []

    static func read(in vault: Vault) throws(VaultError) -> SyncState? {
        guard let record = try vault.records(kind: kind).first(where: { $0.id == recordId }) else { return nil }
        guard (try record.integer(Tag.format, as: UInt64.self) ?? 1) <= format else {
            throw VaultError(.tooNew, "the vault's sync state is of a format newer than this authctl reads: open it with a newer authctl")
        }
        var state = SyncState()
        state.version = record.version
        state.storeId = record.field(Tag.storeId).map(Array.init) ?? []
        state.cursor = try record.integer(Tag.cursor, as: UInt64.self) ?? 0
        state.snapshotEntries = try record.integer(Tag.snapshotEntries, as: UInt64.self) ?? 0
        var reader = FieldReader(Array(record.field(Tag.queue) ?? []))
        while !reader.atEnd {
            guard let id = reader.take(16), let rpCount = reader.take(2), let rp = reader.take(Int(BigEndianBytes.integer(rpCount[...]) as UInt16)),
                  let known = reader.take(1), let lands = reader.take(16)
            else { throw VaultError(.corrupted, "the vault's sync state has a damaged upload queue") }
            state.queue.append(Upload(revisionId: id, rpId: rp, landsAt: known == [1] ? Instant(bytes: lands[...]) : nil))
        }
        var problems = FieldReader(Array(record.field(Tag.unreadable) ?? []))
        while !problems.atEnd {
            guard let nameCount = problems.take(2), let name = problems.take(Int(BigEndianBytes.integer(nameCount[...]) as UInt16)),
                  let reasonCount = problems.take(2), let reason = problems.take(Int(BigEndianBytes.integer(reasonCount[...]) as UInt16))
            else { throw VaultError(.corrupted, "the vault's sync state has a damaged list of store problems") }
            state.unreadable.append(.init(name: String(decoding: name, as: UTF8.self), reason: String(decoding: reason, as: UTF8.self)))
        }
        return state
    }

    /// The record for this state, one version past the one read.
    func record() -> VaultRecord {
        var record = VaultRecord(id: Self.recordId, kind: Self.kind, version: version + 1)
        record.setInteger(Tag.format, Self.format)
        record.setInteger(Tag.cursor, cursor)
        record.setField(Tag.storeId, storeId)
        record.setInteger(Tag.snapshotEntries, snapshotEntries)
        var queued = [UInt8]()
        for upload in queue {
            queued += upload.revisionId + BigEndianBytes.of(UInt16(upload.rpId.count)) + upload.rpId
            queued += upload.landsAt.map { [1] + $0.bytes } ?? [UInt8](repeating: 0, count: 17)
        }
        record.setField(Tag.queue, queued.isEmpty ? nil : queued)
        var problems = [UInt8]()
        for problem in unreadable {
            let name = Array(problem.name.utf8.prefix(1024)), reason = Array(problem.reason.utf8.prefix(4096))
            problems += BigEndianBytes.of(UInt16(name.count)) + name + BigEndianBytes.of(UInt16(reason.count)) + reason
        }
        record.setField(Tag.unreadable, problems.isEmpty ? nil : problems)
        return record
    }
}

/// Reads a byte string front to back.
struct FieldReader {
    private let bytes: [UInt8]
    private var offset = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    var atEnd: Bool { offset >= bytes.count }
    mutating func take(_ count: Int) -> [UInt8]? {
        guard count >= 0, bytes.count - offset >= count else { return nil }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }
}
