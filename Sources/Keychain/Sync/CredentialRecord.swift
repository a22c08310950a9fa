import KeyVault
import VirtualAuthenticator

/// A passkey revision as a vault `credential` record: the field tags (documented in
/// docs/vault-format.md) and how to make one. Every change a device makes to a passkey — its
/// creation, a new signature count, its deletion — is a new record, a revision, so that each can
/// travel to the account store at its own time. The private key is a sealed secret in its own field.
/// The fields are written and read by ``CredentialCodec``.
enum CredentialRecord {
    enum Tag {
        static let credentialId: UInt8 = 1, rpId: UInt8 = 2, userHandle: UInt8 = 3, userName: UInt8 = 4
        static let userDisplayName: UInt8 = 5, createdAt: UInt8 = 6, signCount: UInt8 = 7
        static let backupFlags: UInt8 = 8, publicKey: UInt8 = 9, sealedPrivateKey: UInt8 = 10
        static let algorithm: UInt8 = 11, countsSignatures: UInt8 = 12, requiresUserVerification: UInt8 = 13
        /// The passkey's identity across revisions and devices (absent: the record's own id).
        static let itemId: UInt8 = 14
        /// The device that made the revision (absent: the first device), and its name.
        static let deviceId: UInt8 = 15, deviceName: UInt8 = 18
        /// When the revision was made, in milliseconds (absent: `createdAt` in seconds).
        static let changedAt: UInt8 = 16
        /// `1`: the revision deletes the passkey.
        static let removed: UInt8 = 17
        /// The vault position the revision was written at (orders changes in one millisecond).
        static let changedOrder: UInt8 = 19
        /// The profile the passkey was made as, and the AAGUID its registration reported.
        static let profile: UInt8 = 20, aaguid: UInt8 = 21
        /// credProtect level (1), credBlob (bytes), the sealed large blob (docs/extensions.md).
        static let credProtect: UInt8 = 22, credBlob: UInt8 = 23, largeBlob: UInt8 = 24
        /// `1`: hidden by the RP's `signalAllAcceptedCredentials` (kept, offered to no ceremony).
        static let hidden: UInt8 = 25
        /// `1`: not discoverable (a security key's credential made with `rk` false).
        static let notDiscoverable: UInt8 = 27
        /// When the passkey was created, as an instant (16: Unix ms ‖ vault position), carried by
        /// every revision of it; absent: `createdAt` (seconds) × 1000, position 0. Every device
        /// orders passkeys by it (then item id), so all pick the same default passkey.
        static let created: UInt8 = 26
        /// `1`: made with a largeBlobKey (CTAP 2.1 §12.3), derived from the private key.
        static let largeBlobKey: UInt8 = 28
        /// The vault whose id the private key's biometry-key seal is bound to, when that is not
        /// the vault holding the record (a passkey made with user verification in another vault
        /// of the account); written on upload.
        static let sealedInVault: UInt8 = 42
    }

    /// The revision of a passkey whose state is `credential`, made by `device` at `changedAt`
    /// (``CredentialCodec`` writes its fields).
    static func make(id recordId: [UInt8], itemId: [UInt8], for credential: Credential, sealedKey: [UInt8],
                     device: DeviceRecord, changedAt: Instant, created: Instant, sealedInVault: [UInt8]? = nil) -> VaultRecord {
        VaultRecord(id: recordId, kind: .credential, fields: CredentialCodec.encode(RevisionContent(
            credential: credential, itemId: itemId, deviceId: device.id, deviceName: device.name, changedAt: changedAt,
            removed: false, created: created, sealedKey: sealedKey, sealedInVault: sealedInVault)))
    }

    /// The creation instant of a passkey added now (`now`) whose `createdAt` (seconds) is
    /// `credential`'s: `now` when that is now's second, else the start of its second at `now`'s
    /// position (an import keeps the time it was made elsewhere). A registration's passkey is
    /// created at its commit's instant, whatever second its ceremony began in.
    static func creation(of credential: Credential, now: Instant) -> Instant {
        now.ms / 1000 == credential.createdAt ? now : Instant(ms: Revision.milliseconds(ofSeconds: credential.createdAt), order: now.order)
    }

    /// The revision that deletes passkey `itemId` (holding just what names it).
    static func removal(id: [UInt8], of credential: Credential, itemId: [UInt8], device: DeviceRecord, changedAt: Instant) -> VaultRecord {
        VaultRecord(id: id, kind: .credential, fields: CredentialCodec.encode(RevisionContent(
            credential: credential, itemId: itemId, deviceId: device.id, deviceName: device.name, changedAt: changedAt,
            removed: true, created: .zero, sealedKey: nil, sealedInVault: nil)))
    }
}
