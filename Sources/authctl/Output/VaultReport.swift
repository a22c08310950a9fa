import KeyVault
import Keychain

/// What `vault info` and `vault check` print.
struct VaultReport: Encodable {
    struct KDF: Encodable {
        let algorithm = "argon2id13"
        let level: String
        let opslimit: UInt64
        let memlimit: UInt64
    }

    let path: String
    let formatVersion: UInt16
    let vaultId: String
    let kdf: KDF
    let generation: UInt64
    let frames: UInt64
    let committedBytes: Int
    let uncommittedBytes: Int
    /// The log frames the index covers (absent: no index); opening reads the frames after them.
    let indexedFrames: UInt64?
    let indexBytes: UInt64
    let credentials: Int
    let biometry: BiometryStatus
    let credentialsChecked: Int?
    let sealedUnderBiometry: Int?

    init(_ device: Device, check: VaultCheck?) throws(CLIError) {
        let facts: Vault.Facts
        do { facts = try device.facts } catch { throw CLIError(error) }
        let level = KDFLevel(opslimit: facts.opslimit, memlimit: facts.memlimit)
        path = device.path
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
        biometry = device.biometry
        credentialsChecked = check?.credentialsChecked
        sealedUnderBiometry = check?.sealedUnderBiometry
    }
}
