import KeyVault

/// One field of a record kind: its tag, what it holds, the type that reads and writes it, and
/// whether it is **sealed** — a secret sealed under the vault key (``Vault/sealSecret(_:recordId:)``),
/// which a key rotation opens with the old key and seals again with the new one. A field sealed
/// under another key (the account key's tag 43, the largeBlobKey's tag 24, a PIN's wrap) is not:
/// rotation leaves it as it is.
struct RecordField: Equatable {
    /// The type that owns the field: the only code that reads or writes it.
    enum Owner: String {
        case credentialRecord = "CredentialRecord", storeReplica = "StoreReplica"
        case deviceRecord = "DeviceRecord", accountSettings = "AccountSettings", syncState = "SyncState", keyState = "KeyStateRecord"
        case publishedDevice = "PublishedDevice", publishedSettings = "PublishedSettings", repairRequest = "RepairRequest"
        /// The vault's index: a tombstone of a partitioned record carries its partition value.
        case vaultIndex = "VaultIndex"
    }

    let tag: UInt8
    let name: String
    let owner: Owner
    let sealed: Bool

    init(_ tag: UInt8, _ name: String, _ owner: Owner, sealed: Bool = false) {
        (self.tag, self.name, self.owner, self.sealed) = (tag, name, owner, sealed)
    }
}

/// Every tag of one record kind, whoever owns it: types that share a record (a passkey revision
/// and its replica; the first device and the account in the settings record) share its numbering,
/// so the numbering is checked here, once, rather than by comments in each owner. The tag values
/// are the owners' own constants (``CredentialRecord/Tag`` and the rest); this table adds what
/// each is, who owns it and whether it is sealed. docs/vault-format.md documents the same tables.
struct RecordTable {
    /// What the record is, as docs/vault-format.md's section on it is titled.
    let name: String
    /// The vault record kind it describes; `nil` for records kept in the account store's metadata.
    let kind: VaultRecord.Kind?
    let fields: [RecordField]

    init(_ name: String, kind: VaultRecord.Kind?, _ fields: [RecordField]) {
        (self.name, self.kind, self.fields) = (name, kind, fields)
    }

    func field(_ tag: UInt8) -> RecordField? { fields.first { $0.tag == tag } }

    /// Tags that more than one field claims, ascending: empty for a sound table.
    var duplicateTags: [UInt8] {
        var seen = Set<UInt8>(), repeated = Set<UInt8>()
        for field in fields where !seen.insert(field.tag).inserted { repeated.insert(field.tag) }
        return repeated.sorted()
    }

    /// The tags of sealed fields, ascending.
    var sealedTags: [UInt8] { fields.filter(\.sealed).map(\.tag).sorted() }
}

/// The record kinds' tables. Adding a field to a record means adding it here; a sealed one is then
/// sealed again by key rotation without anyone listing it there (``vaultSealedFields``).
enum RecordTags {
    static let credential = RecordTable("Credential record", kind: .credential, credentialFields + replicaFields)
    static let settings = RecordTable("Settings record", kind: .settings, deviceFields + accountFields)
    static let device = RecordTable("Device record", kind: .device, deviceFields)
    static let syncState = RecordTable("Sync state", kind: SyncState.kind, syncStateFields)
    static let securityKey = RecordTable("Security key record", kind: KeyStateRecord.kind, securityKeyFields)
    static let tombstone = RecordTable("Tombstone", kind: .tombstone, [
        RecordField(CredentialRecord.Tag.rpId, "RP ID of the revision it removes", .vaultIndex),
    ])
    static let publishedDevice = RecordTable("directory", kind: nil, publishedDeviceFields)
    static let publishedSettings = RecordTable("settings", kind: nil, publishedSettingsFields)
    static let repairRequest = RecordTable("repair", kind: nil, [
        RecordField(RepairRequest.Tag.id, "id", .repairRequest), RecordField(RepairRequest.Tag.vault, "asked by vault", .repairRequest),
        RecordField(RepairRequest.Tag.askedAt, "asked at", .repairRequest), RecordField(RepairRequest.Tag.head, "store head", .repairRequest),
        RecordField(RepairRequest.Tag.reason, "reason", .repairRequest),
        RecordField(RepairRequest.Tag.findings, "what it asks for", .repairRequest),
    ])

    /// The tables of the vault's record kinds.
    static let vault = [credential, settings, device, syncState, securityKey, tombstone]
    /// The tables of the records sealed into the account store's metadata.
    static let storeMetadata = [publishedDevice, publishedSettings, repairRequest]
    static let all = vault + storeMetadata

    /// The vault's table of `kind`, if it has one.
    static func table(of kind: VaultRecord.Kind) -> RecordTable? { vault.first { $0.kind == kind } }

    /// Per vault record kind, the fields sealed under the vault key: what key rotation seals again.
    static func sealedFields(of tables: [RecordTable] = vault) -> [VaultRecord.Kind: [UInt8]] {
        var out = [VaultRecord.Kind: [UInt8]]()
        for table in tables { if let kind = table.kind, !table.sealedTags.isEmpty { out[kind] = table.sealedTags } }
        return out
    }

    private static let credentialFields: [RecordField] = {
        typealias T = CredentialRecord.Tag
        let o = RecordField.Owner.credentialRecord
        return [
            RecordField(T.credentialId, "credential id", o), RecordField(T.rpId, "RP ID", o),
            RecordField(T.userHandle, "user handle", o), RecordField(T.userName, "user name", o),
            RecordField(T.userDisplayName, "user display name", o), RecordField(T.createdAt, "created at (seconds)", o),
            RecordField(T.signCount, "sign count", o), RecordField(T.backupFlags, "backup flags", o),
            RecordField(T.publicKey, "public key", o),
            RecordField(T.sealedPrivateKey, "private key, sealed under the vault key", o, sealed: true),
            RecordField(T.algorithm, "COSE algorithm", o), RecordField(T.countsSignatures, "counts signatures", o),
            RecordField(T.requiresUserVerification, "requires user verification", o), RecordField(T.itemId, "item id", o),
            RecordField(T.deviceId, "device id", o), RecordField(T.changedAt, "changed at (ms)", o),
            RecordField(T.removed, "removed", o), RecordField(T.deviceName, "device name", o),
            RecordField(T.changedOrder, "changed order", o), RecordField(T.profile, "profile", o),
            RecordField(T.aaguid, "AAGUID", o), RecordField(T.credProtect, "credProtect level", o),
            RecordField(T.credBlob, "credBlob", o),
            // Sealed, but under the passkey's largeBlobKey, not the vault key: rotation keeps it.
            RecordField(T.largeBlob, "large blob", o), RecordField(T.hidden, "hidden", o),
            RecordField(T.notDiscoverable, "not discoverable", o),
            RecordField(T.created, "created (instant)", o), RecordField(T.sealedInVault, "vault of the biometry-key seal", o),
            RecordField(T.largeBlobKey, "made with a largeBlobKey", o),
        ]
    }()

    private static let replicaFields: [RecordField] = {
        typealias T = StoreReplica.Tag
        let o = RecordField.Owner.storeReplica
        return [
            RecordField(T.revisionId, "revision id", o), RecordField(T.landedAt, "landed at", o),
            // The store's seal, under the account key (which rotation does not change).
            RecordField(T.storeSealedKey, "private key, sealed under the account key", o),
        ]
    }()

    private static let deviceFields: [RecordField] = {
        typealias T = DeviceRecord.Tag
        let o = RecordField.Owner.deviceRecord
        return [
            RecordField(T.salt, "biometry salt", o), RecordField(T.wrappedKey, "wrapped biometry key", o),
            RecordField(T.failures, "failed PIN attempts", o), RecordField(T.maxAttempts, "attempts allowed", o),
            RecordField(T.opslimit, "PIN opslimit", o), RecordField(T.memlimit, "PIN memlimit", o),
            RecordField(T.name, "device name", o), RecordField(T.uploadDelay, "upload delays", o),
            RecordField(T.downloadDelay, "download delays", o), RecordField(T.syncedFrom, "synced from", o),
            RecordField(T.formerSalt, "former biometry salt", o), RecordField(T.formerWrappedKey, "former wrapped biometry key", o),
            RecordField(T.formerOpslimit, "former PIN opslimit", o), RecordField(T.formerMemlimit, "former PIN memlimit", o),
            RecordField(T.syncedFromOrder, "synced-from order", o), RecordField(T.removedAt, "removed at", o),
            RecordField(T.offline, "offline intervals", o), RecordField(T.profile, "profile", o),
            RecordField(T.aaguid, "AAGUID", o), RecordField(T.globalSignCount, "global signature counter", o),
            RecordField(T.passkeysUnsupported, "no passkey support", o),
        ]
    }()

    private static let accountFields: [RecordField] = {
        typealias T = AccountSettings.Tag
        let o = RecordField.Owner.accountSettings
        return [
            RecordField(T.accountKey, "account key, sealed under the vault key", o, sealed: true),
            RecordField(T.accountId, "account id", o), RecordField(T.seed, "delay seeds", o),
            RecordField(T.backupStateImmediate, "backup state immediate", o), RecordField(T.uploadDelay, "account upload delays", o),
            RecordField(T.downloadDelay, "account download delays", o), RecordField(T.storePath, "account store (directory or address)", o),
            RecordField(T.attestationCA, "attestation CA, sealed under the vault key", o, sealed: true),
        ]
    }()

    private static let syncStateFields: [RecordField] = {
        typealias T = SyncState.Tag
        let o = RecordField.Owner.syncState
        return [
            RecordField(T.cursor, "cursor", o), RecordField(T.storeId, "store id", o), RecordField(T.queue, "upload queue", o),
            RecordField(T.snapshotEntries, "snapshot entries", o), RecordField(T.unreadable, "unreadable store changes", o),
            RecordField(T.format, "format", o), RecordField(T.settingsVersion, "settings version taken up", o),
            RecordField(T.collected, "passkeys collected", o), RecordField(T.inFlight, "changes in flight", o),
            RecordField(T.pendingDeletions, "deletions waiting", o), RecordField(T.settingsToPublish, "settings to publish", o),
            RecordField(T.directory, "device directory as last read", o),
            RecordField(T.collectedThrough, "store head when collected", o),
            RecordField(T.queueUsers, "user handles of the upload queue", o),
            RecordField(T.pendingDeletionUsers, "user handles of the deletions waiting", o),
            RecordField(T.chains, "each vault's chain as read", o), RecordField(T.ownHead, "this vault's chain as made", o),
            RecordField(T.anchor, "change at the cursor", o), RecordField(T.repairAnswered, "repair request answered", o),
            RecordField(T.problems, "store problems", o),
            RecordField(T.inFlightRequirements, "what the changes in flight need received", o),
            RecordField(T.pendingDeletionRequirements, "what the deletions waiting need received", o),
            RecordField(T.snapshotsListed, "snapshot lists seen", o),
        ]
    }()

    private static let securityKeyFields: [RecordField] = {
        typealias T = KeyStateRecord.Tag
        let o = RecordField.Owner.keyState
        return [
            RecordField(T.deviceId, "device id", o), RecordField(T.alwaysUv, "alwaysUv", o),
            RecordField(T.minPINLength, "minimum PIN length", o), RecordField(T.minPINLengthRPIDs, "minPinLength RP IDs", o),
            RecordField(T.forcePINChange, "PIN change forced", o), RecordField(T.pinLength, "PIN length", o),
            RecordField(T.largeBlobArray, "large-blob array", o),
        ]
    }()

    private static let publishedDeviceFields: [RecordField] = {
        typealias T = PublishedDevice.Tag
        let o = RecordField.Owner.publishedDevice
        return [
            RecordField(T.vault, "vault id", o), RecordField(T.name, "name", o), RecordField(T.removed, "removed", o),
            RecordField(T.online, "online", o), RecordField(T.enrolled, "has a PIN", o), RecordField(T.syncedFrom, "synced from", o),
            RecordField(T.acknowledged, "acknowledged sequence", o), RecordField(T.uploadDelay, "upload delay", o),
            RecordField(T.downloadDelay, "download delay", o), RecordField(T.received, "uploads received", o),
            RecordField(T.head, "its vault's chain as made", o), RecordField(T.repaired, "repair request answered", o),
        ]
    }()

    private static let publishedSettingsFields: [RecordField] = {
        typealias T = PublishedSettings.Tag
        let o = RecordField.Owner.publishedSettings
        return [
            RecordField(T.uploadDelay, "upload delay", o), RecordField(T.downloadDelay, "download delay", o),
            RecordField(T.seed, "seed", o), RecordField(T.backupStateImmediate, "backup state immediate", o),
        ]
    }()
}
