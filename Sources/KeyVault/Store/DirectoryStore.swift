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
package final class DirectoryStore: AccountStore {
    package let path: String
    /// Whether objects are flushed to disk as they are written: `.none` only for the store of a
    /// throw-away vault (``Vault/Durability``).
    package let durability: Vault.Durability
    private var durable: Bool { durability == .full }
    static let objectLimit = 1 << 20

    /// Opens the store at `path`, creating it (0700) when it does not exist.
    package init(path: String, durability: Vault.Durability = .full) throws(VaultError) {
        self.path = path
        self.durability = durability
        if POSIXFile.exists(path) { try POSIXFile.requireNoLink(path) }
        try POSIXFile.makeDirectory(path, durable: durability == .full)
        try POSIXFile.requireNoLink(path)
        try POSIXFile.requirePrivateDirectory(path)
        if POSIXFile.exists(objects) { try POSIXFile.requireNoLink(objects) }
        try POSIXFile.makeDirectory(objects, durable: durable)
        try POSIXFile.requireNoLink(objects)
        try POSIXFile.requirePrivateDirectory(objects)
    }

    private var objects: String { path + "/objects" }

    /// Whether anything exists at `path` (a store, or something in its place).
    package static func exists(at path: String) -> Bool { POSIXFile.exists(path) }

    /// Deletes the store at `path`: its objects, then its directories if that empties them.
    package static func remove(at path: String) throws(VaultError) {
        guard POSIXFile.exists(path) else { return }
        if !POSIXFile.isDirectory(path) || (try? POSIXFile.requireNoLink(path)) == nil {
            // A file or a link in the store's place goes itself; a link is never followed.
            guard unlink(path) == 0 || errno == ENOENT else { throw VaultError(.io, "cannot remove \(path): \(POSIXFile.errorText())") }
            return
        }
        try POSIXFile.requirePrivateDirectory(path)
        if (try? POSIXFile.requireNoLink(path + "/objects")) == nil {
            unlink(path + "/objects")
            rmdir(path)
            return
        }
        for name in POSIXFile.entries(path + "/objects") where unlink(path + "/objects/" + name) != 0 && errno != ENOENT {
            throw VaultError(.io, "cannot remove \(name) from \(path): \(POSIXFile.errorText())")
        }
        rmdir(path + "/objects")
        rmdir(path)
    }

    package func names() throws(VaultError) -> [String] {
        try POSIXFile.listing(objects).filter { !$0.hasPrefix(".") && !$0.hasSuffix(".tmp") }
    }

    package func object(_ name: String) throws(VaultError) -> [UInt8] {
        try Self.checkName(name)
        return try POSIXFile.readAll(objects + "/" + name, limit: Self.objectLimit)
    }

    package func put(_ name: String, _ bytes: [UInt8]) throws(VaultError) {
        try Self.checkName(name)
        let final = objects + "/" + name
        if POSIXFile.exists(final) { return }
        let temporary = objects + "/.\(name).\(getpid()).tmp"
        try POSIXFile.writeNew(temporary, bytes, durable: durable)
        defer { unlink(temporary) }
        guard link(temporary, final) == 0 || errno == EEXIST else {
            throw VaultError(.io, "cannot store object \(name) in \(path): \(POSIXFile.errorText())")
        }
        try POSIXFile.syncDirectory(objects, durable: durable)
    }

    package func delete(_ name: String) throws(VaultError) {
        try Self.checkName(name)
        guard unlink(objects + "/" + name) == 0 || errno == ENOENT else {
            throw VaultError(.io, "cannot remove object \(name) from \(path): \(POSIXFile.errorText())")
        }
    }

    /// Flushes the objects directory: the deletions before it are durable.
    package func flush() throws(VaultError) { try POSIXFile.syncDirectory(objects, durable: durable) }

    /// Object names are the vault's own (hexadecimal): nothing that could leave the directory.
    private static func checkName(_ name: String) throws(VaultError) {
        guard !name.isEmpty, name.count <= 128, Hex.bytes(name) != nil else {
            throw VaultError(.invalid, "'\(name)' is not a store object name")
        }
    }
}
