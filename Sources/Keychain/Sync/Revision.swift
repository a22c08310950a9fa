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
    /// The vault the key's biometry-key seal is bound to, when another vault of the account made it.
    let sealedInVault: [UInt8]?
    let source: Source

    var storeLandedAt: Instant? { if case .store(let t, _) = source { t } else { nil } }

    /// Reads a `credential` record (``CredentialCodec/decode(_:firstDevice:)``): one that does not
    /// decode is `corrupted`.
    init(_ record: VaultRecord, source: Source, firstDevice: DeviceRecord) throws(VaultError) {
        let content: RevisionContent
        do { content = try CredentialCodec.decode(record, firstDevice: (firstDevice.id, firstDevice.name)) } catch {
            throw VaultError(.corrupted, error.description)
        }
        id = record.id
        itemId = content.itemId
        originId = content.deviceId
        originName = content.deviceName
        changedAt = content.changedAt
        removed = content.removed
        created = content.created
        credential = content.credential
        sealedKey = content.sealedKey
        sealedInVault = content.sealedInVault
        self.source = source
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
