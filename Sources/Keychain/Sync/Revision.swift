import KeyVault
import VirtualAuthenticator

/// One revision of a passkey, wherever it was read: a record in this vault (a change one of its
/// devices made) or an object in the account store (a change that travelled there).
final class Revision {
    enum Source {
        /// In this vault: its private key sealed under the vault key, bound to the record.
        case local(VaultRecord)
        /// From the account store: landed at `landedAt`; its private key sealed under the account key.
        case store(landedAt: Instant, record: VaultRecord)
    }

    let id: [UInt8]
    let itemId: [UInt8]
    let originId: [UInt8]
    let originName: String
    /// When it was made: milliseconds since the epoch, and the vault position it was written at.
    let changedAt: Instant
    let removed: Bool
    /// When the passkey was created (tag 26; else its `createdAt` seconds × 1000, position 0):
    /// the same in every revision, so every device orders passkeys alike (``DeviceView``).
    /// ``Instant/zero`` for a removal.
    let created: Instant
    /// The passkey as this revision leaves it (for a removal, only its id, RP ID and user handle).
    let credential: Credential
    let sealedKey: [UInt8]?
    let source: Source

    var storeLandedAt: Instant? { if case .store(let t, _) = source { t } else { nil } }

    /// Reads a `credential` record. Records from before devices and sync lack the revision tags:
    /// they are the first device's, made when the passkey was created, each its own item.
    init(_ record: VaultRecord, source: Source, firstDevice: DeviceRecord) throws(VaultError) {
        typealias Tag = CredentialRecord.Tag
        func field(_ tag: UInt8) throws(VaultError) -> [UInt8] {
            guard let value = record.field(tag) else { throw VaultError(.corrupted, "a credential record lacks field \(tag)") }
            return Array(value)
        }
        func text(_ tag: UInt8, default fallback: String? = nil) throws(VaultError) -> String {
            guard let bytes = record.field(tag) else {
                if let fallback { return fallback }
                throw VaultError(.corrupted, "a credential record lacks field \(tag)")
            }
            guard let s = String(validating: Array(bytes), as: UTF8.self) else {
                throw VaultError(.corrupted, "field \(tag) of a credential record is not UTF-8")
            }
            return s
        }
        func integer(_ tag: UInt8, _ type: UInt64.Type, default fallback: UInt64? = nil) throws(VaultError) -> UInt64 {
            guard let value = try record.integer(tag, as: UInt64.self) ?? fallback else {
                throw VaultError(.corrupted, "a credential record lacks field \(tag)")
            }
            return value
        }
        func integer(_ tag: UInt8, _ type: UInt32.Type) throws(VaultError) -> UInt32 {
            guard let value = try record.integer(tag, as: UInt32.self) else {
                throw VaultError(.corrupted, "a credential record lacks field \(tag)")
            }
            return value
        }
        id = record.id
        itemId = record.field(Tag.itemId).map(Array.init) ?? record.id
        originId = record.field(Tag.deviceId).map(Array.init) ?? firstDevice.id
        originName = try text(Tag.deviceName, default: firstDevice.name)
        removed = record.field(Tag.removed)?.elementsEqual([1]) ?? false
        self.source = source
        if removed {
            changedAt = Instant(ms: try integer(Tag.changedAt, UInt64.self), order: try integer(Tag.changedOrder, UInt64.self, default: 0))
            sealedKey = nil
            created = .zero
            credential = Credential(
                id: try field(Tag.credentialId), rpId: try text(Tag.rpId), userHandle: try field(Tag.userHandle),
                userName: "", userDisplayName: "", createdAt: 0, signCount: 0, backupEligible: false, backupState: false,
                publicKey: .ec2(x: [], y: []))  // a removal names no key
            return
        }
        let createdAt = try integer(Tag.createdAt, UInt64.self)
        changedAt = Instant(ms: try integer(Tag.changedAt, UInt64.self, default: Self.milliseconds(ofSeconds: createdAt)),
                            order: try integer(Tag.changedOrder, UInt64.self, default: 0))
        if let bytes = record.field(Tag.created) {
            guard let instant = Instant(bytes: bytes) else {
                throw VaultError(.corrupted, "a credential record's creation instant (field \(Tag.created)) is not 16 bytes")
            }
            created = instant
        } else {
            created = Instant(ms: Self.milliseconds(ofSeconds: createdAt), order: 0)
        }
        sealedKey = try field(Tag.sealedPrivateKey)
        let flags = try field(Tag.backupFlags).first ?? 0
        // Records from before other algorithms hold no algorithm: ES256.
        let number = try record.integer(Tag.algorithm, as: Int32.self) ?? Int32(COSEAlgorithm.es256.rawValue)
        guard let algorithm = COSEAlgorithm(rawValue: Int(number)),
              let publicKey = COSEKey(storedForm: try field(Tag.publicKey), algorithm: algorithm) else {
            throw VaultError(.corrupted, "a credential record's public key is not one of its algorithm (\(number))")
        }
        var made = Credential(
            id: try field(Tag.credentialId), rpId: try text(Tag.rpId), userHandle: try field(Tag.userHandle),
            userName: try text(Tag.userName), userDisplayName: try text(Tag.userDisplayName),
            createdAt: createdAt, signCount: try integer(Tag.signCount, UInt32.self),
            backupEligible: flags & 1 != 0, backupState: flags & 2 != 0, publicKey: publicKey,
            countsSignatures: (record.field(Tag.countsSignatures)?.first ?? 0) != 0,
            requiresUserVerification: record.field(Tag.requiresUserVerification)?.elementsEqual([1]) ?? false)
        made.backupStateFixed = flags & 4 != 0
        made.globalCounter = record.field(Tag.countsSignatures)?.first == 2
        made.profile = try text(Tag.profile, default: "")
        made.aaguid = record.field(Tag.aaguid).map(Array.init) ?? []
        if let level = record.field(Tag.credProtect) {
            guard level.count == 1, let policy = CredentialProtectionPolicy(rawValue: level[level.startIndex]) else {
                throw VaultError(.corrupted, "a credential record's credProtect level (field \(Tag.credProtect)) is not 1, 2 or 3")
            }
            made.credProtect = policy
        }
        made.credBlob = record.field(Tag.credBlob).map(Array.init)
        made.largeBlob = record.field(Tag.largeBlob).map(Array.init)
        made.hidden = record.field(Tag.hidden)?.elementsEqual([1]) ?? false
        credential = made
    }

    /// `seconds` × 1000, saturating.
    static func milliseconds(ofSeconds seconds: UInt64) -> UInt64 {
        seconds.multipliedReportingOverflow(by: 1000).overflow ? .max : seconds * 1000
    }

    /// The order last-writer-wins resolves by: the later change (in one millisecond, the one
    /// written later), then the greater device name, then the greater revision id — so every
    /// device settles on the same winner.
    static func precedes(_ a: Revision, _ b: Revision) -> Bool {
        if a.changedAt != b.changedAt { return a.changedAt < b.changedAt }
        if a.originName != b.originName { return a.originName < b.originName }
        return a.id.lexicographicallyPrecedes(b.id)
    }
}
