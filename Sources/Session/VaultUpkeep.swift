import Keychain

/// The vault's own upkeep, which the command line offers (`vault info`, `check`, `passwd`,
/// `compact`, `ca export`): requests on the session's vault like any other, so that a front end
/// never holds the account itself.
extension Session {
    /// Returns when `path` holds a vault, asking for no passphrase: else `vaultNotFound` for what
    /// is not there, `vaultInsecure` for another user's directory, `ioError` for one that cannot
    /// be reached. A front end asks before it asks for the passphrase of a vault that is not there.
    public static func requireVault(at path: String) throws(SessionError) {
        do { try Device.requireVault(at: path) } catch { throw SessionError(error) }
    }

    /// Deletes the throw-away vault at `path` (a scenario's), its default account store, and every
    /// passkey in them, asking for no passphrase; files they did not write are left.
    public static func removeVault(at path: String) throws(SessionError) {
        do { try Device.removeVault(at: path) } catch { throw SessionError(error) }
    }

    /// The vault's format, KDF, log and counts, and `device`'s biometry (`vault info`): reads
    /// every passkey to count them.
    public func vaultReport(device: String? = nil) throws(SessionError) -> VaultReport {
        do {
            let holder = try account.device(device)
            return VaultReport(path: account.path, facts: try account.facts, biometry: holder.biometry, check: nil)
        } catch { throw SessionError(error) }
    }

    /// The same after a check of the whole vault (`vault check`, ``Device/check()``): every frame
    /// authenticated, every private key of `device`'s not sealed under its biometry key opened and
    /// matched to its public key, every passkey held to what a registration makes;
    /// `vaultCorrupted` listing every problem found.
    public func checkVault(device: String? = nil) throws(SessionError) -> VaultReport {
        do {
            let holder = try account.device(device)
            let check = try holder.check()
            return VaultReport(path: account.path, facts: try account.facts, biometry: holder.biometry, check: check)
        } catch { throw SessionError(error) }
    }

    /// What compacting the log did: its committed bytes before and after.
    public struct Compaction: Sendable, Equatable {
        public let bytesBefore: Int
        public let bytesAfter: Int
    }

    /// Rewrites the vault's log with only its live records (`vault compact`; it also happens by
    /// itself as the log grows). A session opened `verifyingFirst` has read the whole vault first.
    public func compactVault() throws(SessionError) -> Compaction {
        do {
            let before = try account.facts.committedBytes
            try account.compact()
            return Compaction(bytesBefore: before, bytesAfter: try account.facts.committedBytes)
        } catch { throw SessionError(error) }
    }

    /// A new passphrase for the vault (and KDF level, when given) and a new vault key: every
    /// record is written again under it (`vault passwd`); `badInput` for an empty one.
    public func changePassphrase(to passphrase: SecureBytes, kdf: KDFLevel? = nil) throws(SessionError) {
        do { try account.changePassphrase(to: passphrase, kdf: kdf) } catch { throw SessionError(error) }
    }

    /// Whether the vault holds its attestation CA already: one from before profiles has none until
    /// a session that writes asks for it (``attestationCA()``), which a reader's cannot.
    public var hasAttestationCA: Bool { account.hasAttestationCA }
}
