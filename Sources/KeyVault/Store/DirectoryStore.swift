#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An ``AccountStore`` in a directory: one file per object under `objects/`, written once
/// (`link` of a flushed temporary file, so two writers of the same object cannot interleave, and a
/// reader never sees half an object). The directory must belong to the user and be private, and
/// its files are read as the vault reads its own: never through a link, only regular files of a
/// bounded size.
public final class DirectoryStore: AccountStore {
    public let path: String
    static let objectLimit = 1 << 20

    /// Opens the store at `path`, creating it (0700) when it does not exist.
    public init(path: String) throws(VaultError) {
        self.path = path
        try POSIXFile.makeDirectory(path)
        try POSIXFile.requireOwnDirectory(path)
        try POSIXFile.requirePrivateDirectory(path)
        try POSIXFile.makeDirectory(objects)
        try POSIXFile.requirePrivateDirectory(objects)
    }

    private var objects: String { path + "/objects" }

    /// Whether a store directory exists at `path`.
    public static func exists(at path: String) -> Bool { POSIXFile.isDirectory(path) }

    /// Deletes the store at `path`: its objects, then its directories if that empties them.
    public static func remove(at path: String) throws(VaultError) {
        try POSIXFile.requirePrivateDirectory(path)
        for name in POSIXFile.entries(path + "/objects") where unlink(path + "/objects/" + name) != 0 && errno != ENOENT {
            throw VaultError(.io, "cannot remove \(name) from \(path): \(POSIXFile.errorText())")
        }
        rmdir(path + "/objects")
        rmdir(path)
    }

    public func names() throws(VaultError) -> [String] {
        POSIXFile.entries(objects).filter { !$0.hasPrefix(".") && !$0.hasSuffix(".tmp") }
    }

    public func object(_ name: String) throws(VaultError) -> [UInt8] {
        try Self.checkName(name)
        return try POSIXFile.readAll(objects + "/" + name, limit: Self.objectLimit)
    }

    public func put(_ name: String, _ bytes: [UInt8]) throws(VaultError) {
        try Self.checkName(name)
        let final = objects + "/" + name
        if POSIXFile.exists(final) { return }
        let temporary = objects + "/.\(name).\(getpid()).tmp"
        try POSIXFile.writeNew(temporary, bytes)
        defer { unlink(temporary) }
        guard link(temporary, final) == 0 || errno == EEXIST else {
            throw VaultError(.io, "cannot store object \(name) in \(path): \(POSIXFile.errorText())")
        }
        try POSIXFile.syncDirectory(objects)
    }

    /// Object names are the vault's own (hexadecimal): nothing that could leave the directory.
    private static func checkName(_ name: String) throws(VaultError) {
        guard !name.isEmpty, name.count <= 128, Hex.bytes(name) != nil else {
            throw VaultError(.invalid, "'\(name)' is not a store object name")
        }
    }
}
