#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An encrypted vault directory (see docs/vault-format.md):
///
///     header   the KDF parameters and the vault key, wrapped under the passphrase
///     log      append-only frames; each seals one atomic batch of records under the vault key
///     commit   how many frames (and bytes) of the log are acknowledged, sealed under the vault key
///     lock     an empty file for flock
///
/// A `Vault` holds the directory's lock for its whole life (shared to read, exclusive to write),
/// so what it read cannot change under it.
public final class Vault {
    public enum Access: Sendable { case read, write }

    static let headerFile = "header", logFile = "log", commitFile = "commit", lockFile = "lock"

    public let path: String
    public let access: Access
    private var header: VaultHeader
    private let key: SecureBytes
    private let lock: VaultLock
    private var frameCount: UInt64 = 0
    private var validLength = 0  // bytes of the log that are committed
    private var fileLength = 0  // bytes in the log file, committed or not
    private var live: [[UInt8]: VaultRecord] = [:]
    private var order: [[UInt8]] = []  // ids in the order they first appeared

    public var vaultId: [UInt8] { header.vaultId }
    public var kdfLimits: (opslimit: UInt64, memlimit: UInt64) { (header.opslimit, header.memlimit) }
    /// Frames in the log: one per committed batch.
    public var committedFrames: UInt64 { frameCount }

    /// Live records (tombstoned ids left out), in the order their ids first appeared.
    public var records: [VaultRecord] { order.compactMap { live[$0] } }

    public func record(id: [UInt8]) -> VaultRecord? { live[id] }

    private init(path: String, access: Access, header: VaultHeader, key: SecureBytes, lock: VaultLock) {
        self.path = path
        self.access = access
        self.header = header
        self.key = key
        self.lock = lock
    }

    private static func file(_ dir: String, _ name: String) -> String { dir + "/" + name }

    // MARK: - Create and open

    /// Creates a vault in `path`, which must be absent or an empty directory.
    public static func create(at path: String, passphrase: SecureBytes, kdf: KDFLevel) throws(VaultError) -> Vault {
        try POSIXFile.makeDirectory(path)
        // Refuse a directory that holds anything but a vault (or an unfinished one) before
        // writing a byte into it; then check again for a vault under the lock, for racing inits.
        func refuseExisting() throws(VaultError) {
            if POSIXFile.exists(file(path, headerFile)) { throw VaultError(.exists, "a vault already exists at \(path)") }
            let strangers = POSIXFile.entries(path).filter { ![lockFile, logFile, commitFile, commitFile + ".tmp", headerFile + ".tmp"].contains($0) }
            guard strangers.isEmpty else {
                throw VaultError(.invalid, "\(path) is not empty (\(strangers.sorted().prefix(3).joined(separator: ", "))); choose a new directory for the vault")
            }
        }
        try refuseExisting()
        let lock = try VaultLock(path: file(path, lockFile), exclusive: true)
        try refuseExisting()
        chmod(path, 0o700)
        let salt = Sodium.randomBytes(Sodium.saltBytes)
        let vaultKey = Sodium.randomKey()
        let wrapping = try Sodium.deriveKey(from: passphrase, salt: salt, opslimit: kdf.opslimit, memlimit: kdf.memlimit)
        var header = VaultHeader(opslimit: kdf.opslimit, memlimit: kdf.memlimit, salt: salt,
                                 vaultId: Sodium.randomBytes(16), wrappedKey: [])
        header.wrappedKey = vaultKey.withUnsafeBytes { Sodium.seal($0, key: wrapping, associatedData: header.associatedData) }
        // The empty log and its commit pointer first, the header last: a directory is a vault once
        // its header exists.
        try POSIXFile.replaceAtomically(file(path, logFile), with: [], directory: path)
        try POSIXFile.replaceAtomically(file(path, commitFile), with: CommitPointer(frameCount: 0, logLength: 0)
            .sealed(key: vaultKey, vaultId: header.vaultId), directory: path)
        try POSIXFile.replaceAtomically(file(path, headerFile), with: header.bytes, directory: path)
        return Vault(path: path, access: .write, header: header, key: vaultKey, lock: lock)
    }

    /// Opens the vault at `path`: unwraps its key with the passphrase and reads every record.
    public static func open(at path: String, passphrase: SecureBytes, access: Access) throws(VaultError) -> Vault {
        guard POSIXFile.exists(file(path, headerFile)) else {
            throw VaultError(.notFound, POSIXFile.isDirectory(path)
                ? "\(path) is not an authctl vault (it has no header file); create one with 'authctl init'"
                : "no vault at \(path); create one with 'authctl init'")
        }
        let lock = try VaultLock(path: file(path, lockFile), exclusive: access == .write)
        let header = try VaultHeader(parsing: try POSIXFile.readAll(file(path, headerFile)))
        let wrapping = try Sodium.deriveKey(from: passphrase, salt: header.salt, opslimit: header.opslimit, memlimit: header.memlimit)
        guard let key = Sodium.open(header.wrappedKey[...], key: wrapping, associatedData: header.associatedData),
              key.count == Sodium.keyBytes
        else { throw VaultError(.locked, "wrong passphrase for the vault at \(path)") }
        let vault = Vault(path: path, access: access, header: header, key: key, lock: lock)
        try vault.readLog()
        return vault
    }

    // MARK: - The log

    /// Associated data of frame `sequence`: binds it to this vault and to its place in the log, so
    /// frames cannot be reordered, dropped from the middle, or moved between vaults.
    private func frameAssociatedData(_ sequence: UInt64) -> [UInt8] {
        var w = ByteWriter()
        w.append(Array("AUTHCTL-FRAME".utf8))
        w.append(VaultHeader.formatVersion)
        w.append(header.vaultId)
        w.append(sequence)
        return w.bytes
    }

    private func readLog() throws(VaultError) {
        let pointer = try CommitPointer(opening: try POSIXFile.readAll(Self.file(path, Self.commitFile)),
                                        key: key, vaultId: header.vaultId)
        let logPath = Self.file(path, Self.logFile)
        let data = try POSIXFile.readAll(logPath)
        fileLength = data.count
        guard UInt64(data.count) >= pointer.logLength else {
            throw VaultError(.corrupted, "the log is \(data.count) bytes but \(pointer.logLength) are committed: it was truncated")
        }
        let committed = Int(pointer.logLength)
        var offset = 0
        while offset < committed {
            guard committed - offset >= 4 else { throw VaultError(.corrupted, "log frame \(frameCount) is cut short") }
            let length = Int(data[offset..<offset + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            guard committed - offset - 4 >= length else {
                throw VaultError(.corrupted, "log frame \(frameCount) (at byte \(offset)) runs past the committed end of the log")
            }
            let sealed = data[(offset + 4)..<(offset + 4 + length)]
            guard let plain = Sodium.open(sealed, key: key, associatedData: frameAssociatedData(frameCount)) else {
                throw VaultError(.corrupted, "log frame \(frameCount) (at byte \(offset)) failed authentication: the vault was damaged or tampered with")
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
        let tail = data.count - committed
        if tail >= 4 {
            let length = Int(data[committed..<committed + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            guard tail <= 4 + length else {
                throw VaultError(.corrupted, "\(tail) bytes follow the committed end of the log, more than one unfinished frame: the commit file is older than the log")
            }
        }
        validLength = committed
    }

    private func apply(_ plain: SecureBytes, frame: UInt64) throws(VaultError) {
        let bytes = plain.withUnsafeBytes { Array($0) }
        var r = ByteReader(bytes, context: "log frame \(frame)")
        let count = try r.read(UInt32.self)
        for _ in 0..<count {
            let record = try VaultRecord(reading: &r)
            if let old = live[record.id], record.version <= old.version {
                throw VaultError(.corrupted, "\(r.context) goes back to version \(record.version) of a record at version \(old.version)")
            }
            if record.kind == .tombstone {
                live[record.id] = nil
            } else {
                if live[record.id] == nil { order.append(record.id) }
                live[record.id] = record
            }
        }
        guard r.remaining == 0 else { throw VaultError(.corrupted, "\(r.context) has \(r.remaining) trailing bytes") }
    }

    /// Commits `changes` as one frame: all of them are durable when this returns, or none is.
    /// A tombstone (kind `.tombstone`) deletes the live record with its id.
    public func commit(_ changes: [VaultRecord]) throws(VaultError) {
        guard access == .write else { throw VaultError(.invalid, "the vault was opened read-only") }
        var w = ByteWriter()
        w.append(UInt32(changes.count))
        for change in changes { w.append(change.bytes) }
        var plain = w.bytes
        let sealed = plain.withUnsafeBytes { Sodium.seal($0, key: key, associatedData: frameAssociatedData(frameCount)) }
        plain.withUnsafeMutableBytes { sodiumWipe($0) }
        var frame = ByteWriter()
        frame.append(UInt32(sealed.count))
        frame.append(sealed)

        let logPath = Self.file(path, Self.logFile)
        let fd = Glibc.open(logPath, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw VaultError(.io, "cannot open \(logPath): \(POSIXFile.errorText())") }
        defer { close(fd) }
        if fileLength != validLength {
            guard ftruncate(fd, off_t(validLength)) == 0 else { throw VaultError(.io, "cannot trim \(logPath): \(POSIXFile.errorText())") }
        }
        guard lseek(fd, off_t(validLength), SEEK_SET) >= 0 else { throw VaultError(.io, "cannot seek \(logPath): \(POSIXFile.errorText())") }
        try POSIXFile.writeAll(fd, frame.bytes, path: logPath)
        try POSIXFile.sync(fd, path: logPath)
        fileLength = validLength + frame.bytes.count
        // The frame counts once the commit pointer moves past it.
        let pointer = CommitPointer(frameCount: frameCount + 1, logLength: UInt64(fileLength))
        try POSIXFile.replaceAtomically(Self.file(path, Self.commitFile),
                                        with: pointer.sealed(key: key, vaultId: header.vaultId), directory: path)
        validLength = fileLength
        frameCount += 1
        // What is on disk is now authoritative; apply it the same way a reader will.
        for change in changes {
            if change.kind == .tombstone { live[change.id] = nil; continue }
            if live[change.id] == nil { order.append(change.id) }
            live[change.id] = change
        }
    }

    // MARK: - Passphrase and facts

    /// Re-wraps the vault key under a new passphrase (and, if given, a new KDF level). No record is
    /// re-encrypted; the header is replaced atomically, so a crash leaves the old or the new one.
    public func changePassphrase(to passphrase: SecureBytes, kdf: KDFLevel?) throws(VaultError) {
        guard access == .write else { throw VaultError(.invalid, "the vault was opened read-only") }
        var updated = header
        updated.opslimit = kdf?.opslimit ?? header.opslimit
        updated.memlimit = kdf?.memlimit ?? header.memlimit
        updated.salt = Sodium.randomBytes(Sodium.saltBytes)
        let wrapping = try Sodium.deriveKey(from: passphrase, salt: updated.salt, opslimit: updated.opslimit, memlimit: updated.memlimit)
        updated.wrappedKey = key.withUnsafeBytes { Sodium.seal($0, key: wrapping, associatedData: updated.associatedData) }
        try POSIXFile.replaceAtomically(Self.file(path, Self.headerFile), with: updated.bytes, directory: path)
        header = updated
    }

    /// What `authctl vault info` and `check` report.
    public struct Facts: Sendable {
        public let formatVersion: UInt16
        public let vaultId: [UInt8]
        public let opslimit: UInt64
        public let memlimit: UInt64
        public let frames: UInt64
        public let committedBytes: Int
        /// Bytes after the committed end of the log: an append that never finished.
        public let uncommittedBytes: Int
        public let liveRecords: [VaultRecord.Kind: Int]
    }

    public var facts: Facts {
        Facts(formatVersion: VaultHeader.formatVersion, vaultId: header.vaultId, opslimit: header.opslimit,
              memlimit: header.memlimit, frames: frameCount, committedBytes: validLength,
              uncommittedBytes: fileLength - validLength,
              liveRecords: records.reduce(into: [:]) { $0[$1.kind, default: 0] += 1 })
    }

    // MARK: - Secrets inside records

    private func secretAssociatedData(_ recordId: [UInt8]) -> [UInt8] {
        Array("AUTHCTL-SECRET".utf8) + header.vaultId + recordId
    }

    /// Seals a secret (a private key) for storage in a field of record `recordId`. Sealed secrets
    /// stay sealed in memory until ``openSecret(_:recordId:)`` is called for the one in use.
    public func sealSecret(_ secret: UnsafeRawBufferPointer, recordId: [UInt8]) -> [UInt8] {
        Sodium.seal(secret, key: key, associatedData: secretAssociatedData(recordId))
    }

    public func openSecret(_ sealed: [UInt8], recordId: [UInt8]) throws(VaultError) -> SecureBytes {
        guard let plain = Sodium.open(sealed[...], key: key, associatedData: secretAssociatedData(recordId)) else {
            throw VaultError(.corrupted, "the secret of record \(hex(recordId)) failed authentication")
        }
        return plain
    }
}

func hex(_ bytes: [UInt8]) -> String {
    bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
}
