#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(ByteOrder) import ByteOrder

/// The log: reading it at open, appending one frame per commit, compacting it into a new
/// generation. See docs/vault-format.md.
extension Vault {
    /// Records per frame when a log is rewritten whole.
    static let compactionBatch = 512

    /// Associated data of frame `sequence` of generation `generation`: binds the frame to this
    /// vault and to its place, so frames cannot be reordered, dropped from the middle, moved
    /// between generations, or moved between vaults.
    func frameAssociatedData(_ sequence: UInt64, generation: UInt64) -> [UInt8] {
        var w = ByteWriter(capacity: 47)
        w.append(Self.frameLabel)
        w.append(VaultHeader.formatVersion)
        w.append(header.vaultId)
        w.append(generation)
        w.append(sequence)
        return w.bytes
    }

    private static let frameLabel = Array("AUTHCTL-FRAME".utf8)

    var logPath: String { Self.file(path, Self.logFile(generation)) }

    /// Reads the commit pointer and every committed frame — or, with an index, its root and the
    /// frames after it. Returns whether the directory holds leftovers a writer should tidy (see
    /// ``tidy()``).
    func readLog() throws(VaultError) -> Bool {
        let (pointer, fromNext) = try readCommitPointer()
        try readLog(pointer)
        return fromNext || POSIXFile.exists(Self.file(path, Self.nextCommitFile)) || !orphanFiles.isEmpty
    }

    /// Reads what `pointer` names: the whole committed log, or the index's root and the log after
    /// it. `past` says what may follow: what the commit file allows (`true`), or anything, for a
    /// log read again up to where this process read it while others may have written since.
    func readLog(_ pointer: CommitPointer, checkingPastTheEnd past: Bool = true) throws(VaultError) {
        generation = pointer.generation
        namedIndex = pointer.index
        guard pointer.logLength <= UInt64(Self.logLimit) else {
            throw VaultError(.corrupted, "the commit file names a log of \(pointer.logLength) bytes, more than a log can hold")
        }
        let committed = Int(pointer.logLength)
        // Where reading starts: after what the index holds, or at the beginning.
        var start = 0
        if partitioning != nil, let name = pointer.index, let opened = try openIndex(name, of: pointer) {
            index = opened
            for (sequence, record) in opened.root.always { try insertFromIndex(record, sequence: sequence) }
            nextSequence = Int(opened.root.nextSequence)
            frameCount = opened.root.frames
            start = Int(opened.root.logLength)
        }
        // The committed bytes and the first 4 of any tail (an unfinished frame's length): nothing
        // past them is read, however long the file says it is.
        let data: [UInt8], size: Int
        do {
            (data, size) = try POSIXFile.readPrefix(logPath, limit: Self.logLimit, from: start, upTo: committed + 4)
        } catch where error.kind == .notFound {
            throw VaultError(.corrupted, "the log \(Self.logFile(generation)) named by the commit file is missing")
        }
        fileLength = size
        guard size >= committed else {
            throw VaultError(.corrupted, "the log is \(size) bytes but \(committed) are committed: it was truncated")
        }
        if index == nil { live.reserveCapacity(Int(min(pointer.frameCount, 10_000_000))) }  // about one record per frame
        // `data` begins at byte `start` of the log.
        let committedInData = committed - start
        var offset = 0
        while offset < committedInData {
            guard committedInData - offset >= 4 else { throw VaultError(.corrupted, "log frame \(frameCount) is cut short") }
            let length = Self.frameLength(data, at: offset)
            guard committedInData - offset - 4 >= length else {
                throw VaultError(.corrupted, "log frame \(frameCount) (at byte \(start + offset)) runs past the committed end of the log")
            }
            let sealed = data[(offset + 4)..<(offset + 4 + length)]
            guard let plain = Sodium.openNonSecret(sealed, key: key, associatedData: frameAssociatedData(frameCount, generation: generation)) else {
                throw VaultError(.corrupted, "log frame \(frameCount) (at byte \(start + offset)) failed authentication: the vault was damaged or tampered with")
            }
            try apply(plain, frame: frameCount)
            frameCount += 1
            offset += 4 + length
        }
        guard frameCount == pointer.frameCount else {
            throw VaultError(.corrupted, "the log holds \(frameCount) committed frames but the commit file says \(pointer.frameCount)")
        }
        // Bytes past the committed length are an append that never finished (the process died
        // before the commit file was replaced, so nothing acknowledged it): ignored here, cut off
        // before the next append. One writer appends one frame at a time, so such a tail holds at
        // most one frame; more is not a crash but a commit file put back from the past.
        let tail = size - committed
        if past, tail >= 4, data.count >= committedInData + 4, tail > 4 + Self.frameLength(data, at: committedInData) {
            throw VaultError(.corrupted, "\(tail) bytes follow the committed end of the log, more than one unfinished frame: the commit file is older than the log")
        }
        validLength = committed
        verified = index == nil
    }

    /// The commit pointer, and whether it was read from `commit.next`: after a key rotation that
    /// stopped between replacing the header and renaming `commit.next` over `commit`, the old
    /// `commit` no longer opens under the header's key and `commit.next` does.
    private func readCommitPointer() throws(VaultError) -> (CommitPointer, Bool) {
        let sealed: [UInt8]
        do {
            sealed = try POSIXFile.readAll(Self.file(path, Self.commitFile), limit: CommitPointer.size)
        } catch where error.kind == .notFound {
            throw VaultError(.corrupted, "the vault's commit file is missing")
        }
        if let pointer = try? CommitPointer(opening: sealed, key: key, vaultId: header.vaultId) {
            committedPointer = sealed
            return (pointer, false)
        }
        if let next = try? POSIXFile.readAll(Self.file(path, Self.nextCommitFile), limit: CommitPointer.size),
           let pointer = try? CommitPointer(opening: next, key: key, vaultId: header.vaultId) {
            committedPointer = next
            return (pointer, true)
        }
        throw VaultError(.corrupted, "the commit file failed authentication: the vault was damaged or tampered with")
    }

    private static func frameLength(_ data: [UInt8], at offset: Int) -> Int {
        Int(BigEndianBytes.integer(data[offset..<offset + 4]) as UInt32)
    }

    private func apply(_ plain: [UInt8], frame: UInt64) throws(VaultError) {
        for record in try VaultDecoding.batch(plain, context: "log frame \(frame)") {
            if let old = live[ByteKey(record.id)]?.record, record.version <= old.version {
                throw VaultError(.corrupted, "log frame \(frame) goes back to version \(record.version) of a record at version \(old.version)")
            }
            applyInMemory(record)
        }
    }

    /// Makes `record` the live version of its id (a tombstone: removes the id), keeping the kind
    /// and field indexes in step. A replaced record keeps its place; an id that comes back after
    /// a tombstone takes a new one.
    func applyInMemory(_ record: VaultRecord) {
        followDerived(record)
        let id = ByteKey(record.id)
        let old = live[id]
        if let index { noteChange(record, replacing: old?.record, in: index) }
        if let old { unindex(old.record) }
        guard record.kind != .tombstone else { live[id] = nil; return }
        let sequence = old?.sequence ?? nextSequence
        if old == nil { nextSequence += 1 }
        live[id] = LiveRecord(record: record, sequence: sequence)
        countByKind[record.kind, default: 0] += 1
        idsByKind[record.kind, default: []].insert(id)
        updateFieldIndexes(record, adding: true)
    }

    private func unindex(_ record: VaultRecord) {
        let id = ByteKey(record.id)
        countByKind[record.kind, default: 0] -= 1
        idsByKind[record.kind]?.remove(id)
        updateFieldIndexes(record, adding: false)
    }

    /// A sealed frame: length ‖ nonce ‖ ciphertext ‖ tag; under `key` when given, else the vault's.
    private func frame(_ records: ArraySlice<VaultRecord>, sequence: UInt64, generation: UInt64, key: SecureBytes? = nil) -> [UInt8] {
        let key = key ?? self.key
        var plain = VaultDecoding.encodeBatch(records)
        let sealed = plain.withUnsafeBytes { Sodium.seal($0, key: key, associatedData: frameAssociatedData(sequence, generation: generation)) }
        plain.withUnsafeMutableBytes { sodiumWipe($0) }
        var frame = ByteWriter()
        frame.append(UInt32(sealed.count))
        frame.append(sealed)
        return frame.bytes
    }

    /// Commits `changes` as one frame: all of them are durable when this returns, or none is.
    /// A tombstone (kind `.tombstone`) deletes the live record with its id.
    package func commit(_ changes: [VaultRecord]) throws(VaultError) {
        try commit(batches: [changes])
    }

    /// Commits several batches, one frame each, with a single flush: for building large vaults
    /// (fixtures, benchmarks) without paying a flush per passkey. Durable together once it
    /// returns. A crash in the middle of it leaves several frames past the commit point, which
    /// opening refuses as `corrupted` (see docs/vault-format.md): use it only on a vault that can
    /// be built again.
    package func commit(batches: [[VaultRecord]]) throws(VaultError) {
        guard access == .write else { throw VaultError(.inconsistent, "the vault was opened read-only") }
        let state = try stateLock(exclusive: true)
        defer { withExtendedLifetime(state) {} }
        try requireUnchanged()
        let batches = try preparingCommit(batches)
        let added = batches.reduce(0) { $0 + $1.count }
        var versions = [ByteKey: UInt64](minimumCapacity: added)
        for change in batches.joined() {
            let id = ByteKey(change.id)
            if let old = versions[id] ?? live[id]?.record.version, change.version <= old {
                throw VaultError(.inconsistent, "a change must raise the record's version (\(change.version) ≤ \(old))")
            }
            versions[id] = change.version
        }
        var bytes = [UInt8]()
        for (i, batch) in batches.enumerated() {
            bytes += frame(batch[...], sequence: frameCount + UInt64(i), generation: generation)
        }
        if let held {
            // The log stays open; what follows the committed end is cut off when something may.
            try held.append(bytes, to: logPath, generation: generation, at: validLength, durable: durable)
        } else {
            let fd = try POSIXFile.openOwned(logPath, O_WRONLY)
            defer { close(fd) }
            // Cut off whatever follows the committed end: an earlier process's unfinished append, or
            // this one's own failed write.
            guard ftruncate(fd, off_t(validLength)) == 0 else { throw VaultError(.io, "cannot trim \(logPath): \(POSIXFile.errorText())") }
            guard lseek(fd, off_t(validLength), SEEK_SET) >= 0 else { throw VaultError(.io, "cannot seek \(logPath): \(POSIXFile.errorText())") }
            do {
                try POSIXFile.writeAll(fd, bytes, path: logPath)
                try POSIXFile.sync(fd, path: logPath, durable: durable)
            } catch {
                _ = ftruncate(fd, off_t(validLength))  // a failed command leaves the log as it found it
                throw error
            }
        }
        fileLength = validLength + bytes.count
        // The frames count once the commit pointer moves past them.
        let frames = frameCount + UInt64(batches.count)
        do {
            try writeCommitPointer(CommitPointer(generation: generation, frameCount: frames, logLength: UInt64(fileLength),
                                                 index: namedIndex))
        } catch {
            if held == nil { trimUncommittedTail() }
            throw error
        }
        held?.logCommitted()
        validLength = fileLength
        frameCount = frames
        // A large batch (a first sync's replicas) grows the in-memory tables once, not by doubling.
        if added > 1024 {
            live.reserveCapacity(live.count + added)
            for kind in Set(batches.joined().map(\.kind)) where kind != .tombstone {
                idsByKind[kind, default: []].reserveCapacity((idsByKind[kind]?.count ?? 0) + added)
            }
        }
        for change in batches.joined() { applyInMemory(change) }
        // The commit is durable; compaction only saves space and the index only time, so their
        // failure is not the commit's (the commit file still names what was there before).
        if needsCompaction { try? compactLocked() } else { try? maintainIndex() }
    }

    /// After a commit pointer that could not be written, cuts the frames it would have named off
    /// the log, so that the failed command leaves every file as it found it — but only when the
    /// commit file on disk is still the one this process last wrote or read: a pointer renamed into
    /// place before a later step failed (the directory's fsync) names those frames, and they stay.
    /// Best effort: the next writer cuts the tail off anyway.
    private func trimUncommittedTail() {
        guard let onDisk = try? POSIXFile.readAll(Self.file(path, Self.commitFile), limit: CommitPointer.size),
              onDisk == committedPointer, let fd = try? POSIXFile.openOwned(logPath, O_WRONLY) else { return }
        defer { close(fd) }
        if ftruncate(fd, off_t(validLength)) == 0 { fileLength = validLength }
    }

    func writeCommitPointer(_ pointer: CommitPointer) throws(VaultError) {
        let sealed = pointer.sealed(key: key, vaultId: header.vaultId)
        if let held {
            // Written over in place: not atomic, which only a vault never opened after a crash may be.
            try held.writeCommit(sealed, to: Self.file(path, Self.commitFile), directory: path, durable: durable)
        } else {
            try POSIXFile.replaceAtomically(Self.file(path, Self.commitFile), with: sealed, directory: path, durable: durable)
        }
        committedPointer = sealed
    }

    /// Refuses to write when the commit file is not the one this process read or wrote last: some
    /// other process changed the vault (one that did not take the writer lock), and writing now
    /// would cut its frames off. A held vault skips the check: while it holds the state lock, no
    /// other process can write (or read) the files.
    func requireUnchanged() throws(VaultError) {
        guard held == nil else { return }
        let onDisk = try? POSIXFile.readAll(Self.file(path, Self.commitFile), limit: CommitPointer.size)
        guard onDisk == committedPointer else {
            throw VaultError(.busy, "another process changed the vault at \(path) while this one had it open; nothing was written")
        }
    }

    /// Superseded versions and tombstones pile up (a counting credential writes a version per
    /// signature). Compact once the log has at least twice as many frames as there are live
    /// records, plus slack: each compaction then pays for itself over as many earlier appends,
    /// so the cost per write stays constant on average.
    var needsCompaction: Bool { frameCount >= 2 * UInt64(max(live.count, index?.root.recordCount ?? 0)) + 256 }

    /// Rewrites the live records into the next generation's log, then moves the commit pointer
    /// to it. A crash before the pointer moves leaves the old generation current (the new file is
    /// an orphan, removed later); after, the new one. The old log is then deleted.
    package func compact() throws(VaultError) {
        guard access == .write else { throw VaultError(.inconsistent, "the vault was opened read-only") }
        let state = try stateLock(exclusive: true)
        defer { withExtendedLifetime(state) {} }
        try requireUnchanged()
        try compactLocked()
    }

    /// A whole log of generation `generation` holding `records`, in frames of
    /// ``compactionBatch``, sealed under `key`; and its frame count.
    func logBytes(_ records: [VaultRecord], generation: UInt64, key: SecureBytes) -> ([UInt8], UInt64) {
        var bytes = [UInt8]()
        var frames: UInt64 = 0
        var start = 0
        repeat {
            let end = min(start + Self.compactionBatch, records.count)
            bytes += frame(records[start..<end], sequence: frames, generation: generation, key: key)
            frames += 1
            start = end
        } while start < records.count
        return (bytes, frames)
    }

    /// ``compact()`` for a caller that holds the state lock exclusively.
    /// With a partitioning, the new generation gets a new index (``writeIndex(generation:frames:logLength:)``).
    func compactLocked() throws(VaultError) {
        // What the index holds replaces the log: the log is read whole first, so damage in the
        // part only the index was read for is found, not dropped.
        try verify()
        let next = generation + 1
        let (bytes, frames) = logBytes(try records, generation: next, key: key)
        let nextPath = Self.file(path, Self.logFile(next))
        try POSIXFile.writeNew(nextPath, bytes, durable: durable)
        let newIndex = try partitioning.map { _ throws(VaultError) in
            try writeIndex(generation: next, frames: frames, logLength: UInt64(bytes.count))
        }
        try POSIXFile.syncDirectory(path, durable: durable)
        try writeCommitPointer(CommitPointer(generation: next, frameCount: frames, logLength: UInt64(bytes.count),
                                             index: newIndex?.name))
        let oldPath = logPath
        let oldIndexPath = Self.file(path, Self.indexFile(generation))
        generation = next
        frameCount = frames
        validLength = bytes.count
        fileLength = bytes.count
        index = newIndex
        verified = true  // the new log was written from what memory holds
        namedIndex = newIndex?.name
        unlink(oldPath)
        unlink(oldIndexPath)
        removeOrphanLogs()
    }

    /// Log and index files a compaction or a key rotation left when it was interrupted: those of
    /// the generation before the current one (the old log was not yet deleted) or after it (the
    /// new one was not yet made current). Only these: any other file is not the vault's to delete.
    var orphanFiles: [String] {
        var neighbours = [Self.logFile(generation + 1), Self.indexFile(generation + 1)]
        if generation > 0 { neighbours += [Self.logFile(generation - 1), Self.indexFile(generation - 1)] }
        return neighbours.filter { POSIXFile.exists(Self.file(path, $0)) }
    }

    /// A writer's clean-up at open, under the exclusive state lock: finishes a key rotation that
    /// stopped after its new header was in place (`commit.next` becomes `commit`), drops a
    /// `commit.next` that never took effect, and deletes orphaned logs.
    func tidy(wait: Duration) throws(VaultError) {
        let state = try VaultLock(path: Self.file(path, Self.lockFile), exclusive: true, wait: wait)
        defer { withExtendedLifetime(state) {} }
        let next = Self.file(path, Self.nextCommitFile)
        let pending = try? POSIXFile.readAll(next, limit: CommitPointer.size)
        // A reader takes this lock after letting go of the shared one: a writer may have compacted
        // or rotated the key in between, and what looked like leftovers are then its files. Only
        // a vault whose commit pointer is still the one read is tidied.
        guard (try? POSIXFile.readAll(Self.file(path, Self.commitFile), limit: CommitPointer.size)) == committedPointer
                || pending == committedPointer else { return }
        if let pending, pending == committedPointer {
            try POSIXFile.renameFile(next, to: Self.file(path, Self.commitFile))
            try POSIXFile.syncDirectory(path, durable: durable)
        } else {
            unlink(next)
        }
        removeOrphanLogs()
    }

    func removeOrphanLogs() {
        for name in orphanFiles { unlink(Self.file(path, name)) }
    }
}
