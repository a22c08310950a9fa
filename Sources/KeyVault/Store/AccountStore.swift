/// Where the devices of one account meet: the stand-in for the cloud. It holds named, immutable
/// objects that devices upload — already sealed, so the store sees only ciphertext — lists them,
/// and drops those a merged object has replaced. A directory by default (``DirectoryStore``); a database server later, so devices on
/// different machines can share an account.
package protocol AccountStore {
    /// The names of every object, in no particular order.
    func names() throws(VaultError) -> [String]
    /// The bytes of object `name`.
    func object(_ name: String) throws(VaultError) -> [UInt8]
    /// Stores object `name` once: a second put of the same name keeps the first (objects never change).
    func put(_ name: String, _ bytes: [UInt8]) throws(VaultError)
    /// Deletes object `name` (after what it held was stored again in a merged object).
    func delete(_ name: String) throws(VaultError)
}
