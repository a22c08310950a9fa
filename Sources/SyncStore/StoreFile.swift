#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(ByteOrder) import ByteOrder
import POSIXFiles

/// The file operations ``DirectoryStore`` needs: ``Files``' (no symbolic link followed, only
/// regular files of this user's of a bounded size read, new files created exclusively and
/// flushed before they are named), each failure named as a ``StoreError``. A directory that is
/// missing or refused by the system is `unavailable` (a cloud that is down); what is planted or
/// damaged where the store keeps a file is `corrupted`.
enum StoreFile {
    static func errorText(_ code: Int32 = errno) -> String { Files.errorText(code) }

    /// Whether a directory entry exists at `path` (a dangling link counts).
    static func exists(_ path: String) -> Bool { Files.exists(path) }

    /// Whether `path` is a directory, and not a link to one.
    static func isDirectory(_ path: String) -> Bool { Files.isDirectory(path, followingLink: false) }

    /// Makes directory `path` (0700) when it is missing, with its missing parents.
    static func makeDirectory(_ path: String, durable: Bool = true) throws(StoreError) {
        try named { () throws(FileFailure) in try Files.makeDirectory(path, durable: durable) }
    }

    /// Refuses what is not a directory of this user's that only this user can write to, or is a
    /// link: whoever can add or replace files in it could plant what the store then reads.
    static func requirePrivateDirectory(_ path: String) throws(StoreError) {
        var st = stat()
        guard lstat(path, &st) == 0 else {
            throw StoreError(.unavailable, "cannot inspect \(path): \(errorText())")
        }
        switch st.st_mode & S_IFMT {
        case S_IFDIR: break
        case S_IFLNK: throw StoreError(.unavailable, "\(path) is a symbolic link, which the store never follows")
        default: throw StoreError(.unavailable, "\(path) is not a directory")
        }
        guard st.st_uid == geteuid() else {
            throw StoreError(.unavailable, "\(path) belongs to another user (uid \(st.st_uid)); a store must be in a directory you own")
        }
        guard st.st_mode & 0o022 == 0 else {
            throw StoreError(.unavailable, "\(path) can be written by others (mode \(String(st.st_mode & 0o777, radix: 8))); run 'chmod 700 \(path)'")
        }
    }

    /// Entries of a directory, without `.` and `..`.
    static func listing(_ path: String) throws(StoreError) -> [String] {
        try named { () throws(FileFailure) in try Files.listing(path) }
    }

    /// The whole of regular file `path`, or `nil` when there is none. What is there and is not a
    /// regular file of this user's, or is longer than `limit`, is `corrupted`.
    static func read(_ path: String, limit: Int) throws(StoreError) -> [UInt8]? {
        do { return try Files.readAll(path, limit: limit) } catch where error.reason == .missing { return nil } catch {
            throw StoreError(error)
        }
    }

    /// Creates `path` afresh (0600) with `bytes`, flushed to disk. Whatever was at `path` is
    /// unlinked first — a planted link is removed, never followed.
    static func writeNew(durable: Bool = true, _ path: String, _ bytes: [UInt8]) throws(StoreError) {
        try named { () throws(FileFailure) in try Files.writeNew(path, bytes, durable: durable) }
    }

    /// Renames `from` over `to` (atomic: a reader sees the old file or the new one).
    static func move(_ from: String, to: String) throws(StoreError) {
        try named { () throws(FileFailure) in try Files.move(from, to: to) }
    }

    /// Writes `bytes` to a temporary file beside `path`, flushed, then renames it into place.
    static func replace(durable: Bool = true, _ path: String, with bytes: [UInt8]) throws(StoreError) {
        let temporary = path + ".\(getpid()).tmp"
        try writeNew(durable: durable, temporary, bytes)
        try move(temporary, to: path)
    }

    /// Unlinks `path` when it exists (never following a link).
    static func remove(_ path: String) throws(StoreError) {
        try named { () throws(FileFailure) in try Files.remove(path) }
    }

    static func syncDirectory(_ path: String) throws(StoreError) {
        try named { () throws(FileFailure) in try Files.syncDirectory(path, durable: true, followingLink: false) }
    }

    /// `body`'s result, or its failure named as the store names it.
    private static func named<T>(_ body: () throws(FileFailure) -> T) throws(StoreError) -> T {
        do { return try body() } catch { throw StoreError(error) }
    }
}

extension StoreError {
    /// A file operation's failure, as the store names it: what the system refuses, or a file that
    /// is not there, is `unavailable` (the store may work again later); anything else where the
    /// store keeps a file — a link, not a regular file, another user's, of a size it never
    /// writes — is `corrupted`.
    init(_ failure: FileFailure) {
        let kind: Kind = switch failure.reason {
        case .missing, .system, .busy: .unavailable
        case .link, .notRegular, .otherUser, .tooLarge, .truncated: .corrupted
        }
        self.init(kind, failure.message)
    }
}

/// An exclusive lock (``FileLock``) on the store's lock file, held while this lives; retried until
/// `wait` runs out, then refused as `unavailable` (another writer holds the store), as is a lock
/// file that cannot be used.
final class StoreLock {
    private let lock: FileLock

    init(path: String, wait: Duration) throws(StoreError) {
        do throws(FileFailure) {
            lock = try FileLock(path: path, exclusive: true, wait: wait)
        } catch {
            let message: String = switch error.reason {
            case .busy: "the store is still held by another writer after waiting \(wait.components.seconds) s"
            case .missing, .system: "cannot use the store's lock: \(error.message)"
            case .link, .notRegular, .otherUser, .tooLarge, .truncated:
                "the store's lock \(path) is not a regular file of this user's: \(error.message)"
            }
            throw StoreError(.unavailable, message)
        }
    }
}

/// The store's checksum and hex names (its fixed-width integers are big-endian: `BigEndianBytes`).
enum StoreBytes {
    /// FNV-1a (64 bits): catches a torn or damaged file. Not authentication: the objects are
    /// sealed by whoever uploads them, and a reader trusts only what opens under its key.
    static func checksum(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return BigEndianBytes.of(hash)
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes { out += [digits[Int(b >> 4)], digits[Int(b & 15)]] }
        return String(decoding: out, as: UTF8.self)
    }

    /// A sequence as a file name: 16 hex digits, so names sort as numbers do.
    static func name(_ sequence: UInt64) -> String { hex(BigEndianBytes.of(sequence)) }
}
