import KeyVault
import Keychain

/// What `authctl vault info` and `vault check` print: the vault's format, KDF, log and counts,
/// the device's biometry, and, after a check, what it opened.
public struct VaultReport: Encodable, Sendable, Equatable {
    public struct KDF: Encodable, Sendable, Equatable {
        public let algorithm = "argon2id13"
        /// The level whose costs these are (`custom`: none of them).
        public let level: String
        public let opslimit: UInt64
        public let memlimit: UInt64
    }

    public let path: String
    public let formatVersion: UInt16
    public let vaultId: String
    public let kdf: KDF
    public let generation: UInt64
    public let frames: UInt64
    public let committedBytes: Int
    public let uncommittedBytes: Int
    /// The log frames the index covers (absent: no index); opening reads the frames after them.
    public let indexedFrames: UInt64?
    public let indexBytes: UInt64
    public let credentials: Int
    public let biometry: BiometryStatus
    public let credentialsChecked: Int?
    public let sealedUnderBiometry: Int?

    init(path: String, facts: Vault.Facts, biometry: BiometryStatus, check: VaultCheck?) {
        let level = KDFLevel(opslimit: facts.opslimit, memlimit: facts.memlimit)
        self.path = path
        formatVersion = facts.formatVersion
        vaultId = facts.vaultIdHex
        kdf = KDF(level: level?.rawValue ?? "custom", opslimit: facts.opslimit, memlimit: facts.memlimit)
        generation = facts.generation
        frames = facts.frames
        committedBytes = facts.committedBytes
        uncommittedBytes = facts.uncommittedBytes
        indexedFrames = facts.indexedFrames
        indexBytes = facts.indexBytes
        credentials = facts.liveRecords[.credential] ?? 0
        self.biometry = biometry
        credentialsChecked = check?.credentialsChecked
        sealedUnderBiometry = check?.sealedUnderBiometry
    }
}
