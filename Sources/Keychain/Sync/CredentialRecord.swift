import KeyVault
import VirtualAuthenticator

/// A passkey revision as a vault `credential` record: the field tags (documented in
/// docs/vault-format.md) and how to make one. Every change a device makes to a passkey — its
/// creation, a new signature count, its deletion — is a new record, a revision, so that each can
/// travel to the account store at its own time. The private key is a sealed secret in its own field.
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
        /// When the passkey was created, as an instant (16: Unix ms ‖ vault position), carried by
        /// every revision of it; absent: `createdAt` (seconds) × 1000, position 0. Every device
        /// orders passkeys by it (then item id), so all pick the same default passkey.
        static let created: UInt8 = 26
    }

    /// The revision of a passkey whose state is `credential`, made by `device` at `changedAt`.
    static func make(id recordId: [UInt8], itemId: [UInt8], for credential: Credential, sealedKey: [UInt8],
                     device: DeviceRecord, changedAt: Instant, created: Instant) -> VaultRecord {
        var record = VaultRecord(id: recordId, kind: .credential, fields: [
            Tag.credentialId: credential.id,
            Tag.rpId: Array(credential.rpId.utf8),
            Tag.userHandle: credential.userHandle,
            // As the authenticator keeps them: 64 bytes at most (PasskeyRules.storedName), so an
            // RP's megabyte user.name cannot make a record the store cannot hold.
            Tag.userName: Array(PasskeyRules.storedName(credential.userName).utf8),
            Tag.userDisplayName: Array(PasskeyRules.storedName(credential.userDisplayName).utf8),
            Tag.backupFlags: [backupFlags(credential)],
            Tag.publicKey: credential.publicKey.storedForm,
            Tag.sealedPrivateKey: sealedKey,
            Tag.countsSignatures: [credential.globalCounter ? 2 : credential.countsSignatures ? 1 : 0],
            Tag.requiresUserVerification: [credential.requiresUserVerification ? 1 : 0],
        ])
        if !credential.profile.isEmpty { record.setField(Tag.profile, Array(credential.profile.utf8)) }
        if !credential.aaguid.isEmpty { record.setField(Tag.aaguid, credential.aaguid) }
        if let level = credential.credProtect { record.setField(Tag.credProtect, [level.rawValue]) }
        if let blob = credential.credBlob { record.setField(Tag.credBlob, blob) }
        if let sealed = credential.largeBlob { record.setField(Tag.largeBlob, sealed) }
        if credential.hidden { record.setField(Tag.hidden, [1]) }
        record.setInteger(Tag.createdAt, credential.createdAt)
        record.setField(Tag.created, created.bytes)
        record.setInteger(Tag.signCount, credential.signCount)
        record.setInteger(Tag.algorithm, Int32(credential.publicKey.algorithm.rawValue))
        stamp(&record, itemId: itemId, device: device, changedAt: changedAt)
        return record
    }

    /// The creation instant of a passkey made now (`now`) whose `createdAt` (seconds) is
    /// `credential`'s: `now` when that is the second it was made in (a registration), else the
    /// start of its second at `now`'s position (an import keeps the time it was made elsewhere).
    static func creation(of credential: Credential, now: Instant) -> Instant {
        now.ms / 1000 == credential.createdAt ? now : Instant(ms: Revision.milliseconds(ofSeconds: credential.createdAt), order: now.order)
    }

    /// BE (bit 0); with a BS set by hand, BS (bit 1) and bit 2. Otherwise sync decides BS.
    static func backupFlags(_ credential: Credential) -> UInt8 {
        (credential.backupEligible ? 1 : 0) | (credential.backupStateFixed ? (credential.backupState ? 2 : 0) | 4 : 0)
    }

    /// The revision that deletes passkey `itemId` (holding just what names it).
    static func removal(id: [UInt8], of credential: Credential, itemId: [UInt8], device: DeviceRecord, changedAt: Instant) -> VaultRecord {
        var record = VaultRecord(id: id, kind: .credential, fields: [
            Tag.credentialId: credential.id,
            Tag.rpId: Array(credential.rpId.utf8),
            Tag.userHandle: credential.userHandle,
            Tag.removed: [1],
        ])
        stamp(&record, itemId: itemId, device: device, changedAt: changedAt)
        return record
    }

    private static func stamp(_ record: inout VaultRecord, itemId: [UInt8], device: DeviceRecord, changedAt: Instant) {
        record.setField(Tag.itemId, itemId)
        record.setField(Tag.deviceId, device.id)
        record.setField(Tag.deviceName, Array(device.name.utf8))
        record.setInteger(Tag.changedAt, changedAt.ms)
        record.setInteger(Tag.changedOrder, changedAt.order)
    }
}
