import KeyVault

/// One device of the account, as its vault record holds it: its name, its biometric enrollment (a
/// wrap of the account's biometry key under this device's PIN) and failure count, its sync delays,
/// when it was offline, and since when its replica has existed. The first device lives in the
/// vault's `settings` record (beside the account's own fields); every other in a `device` record.
/// Field tags are in docs/vault-format.md; tags this version does not know are kept.
struct DeviceRecord {
    enum Tag {
        static let salt: UInt8 = 2, wrappedKey: UInt8 = 3, failures: UInt8 = 4, maxAttempts: UInt8 = 5
        static let opslimit: UInt8 = 6, memlimit: UInt8 = 7, name: UInt8 = 8
        static let uploadDelay: UInt8 = 9, downloadDelay: UInt8 = 10, syncedFrom: UInt8 = 12
        /// The enrollment a factory reset retired (salt, wrapped key, opslimit, memlimit): the
        /// device's former PIN still unwraps it, to recover the account's biometry key.
        static let formerSalt: UInt8 = 13, formerWrappedKey: UInt8 = 14, formerOpslimit: UInt8 = 15, formerMemlimit: UInt8 = 16
        /// The vault position of `syncedFrom`; when the device left the account; its offline
        /// intervals (``OfflineInterval``).
        static let syncedFromOrder: UInt8 = 17, removedAt: UInt8 = 18, offline: UInt8 = 19
        /// The authenticator profile the device answers as, and an AAGUID that replaces the
        /// profile's (27 and 28: 20–26 are the account's, in the same settings record).
        static let profile: UInt8 = 27, aaguid: UInt8 = 28
        /// The device's global signature counter (``SignCounter/global``): its last value (29 is
        /// the account's attestation CA, in the same settings record).
        static let globalSignCount: UInt8 = 30
        /// `1`: the device has no passkey support (a browser without WebAuthn, an old iPhone):
        /// every capability is false and every ceremony and signal fails (`passkeysNotSupported`).
        static let passkeysUnsupported: UInt8 = 31
    }

    static let defaultMaxAttempts = Device.defaultMaxPINAttempts
    static let defaultName = Device.defaultDeviceName

    let record: VaultRecord
    let name: String
    let enrollment: BiometryEnrollment?
    /// The enrollment the last factory reset retired, if no new one replaced it since.
    let formerEnrollment: BiometryEnrollment?
    let failures: UInt32
    let maxAttempts: UInt32
    /// This device's own delays over time; where they have no value yet, the account's apply.
    let uploadDelay: SettingHistory<DelayRange>
    let downloadDelay: SettingHistory<DelayRange>
    let offline: [OfflineInterval]
    /// When this device's replica started empty: when it was added, or last reset.
    let syncedFrom: Instant
    /// When the device left the account (`device remove`); `nil` while it is part of it. Its
    /// record stays, so the changes it uploaded before keep their times.
    let removedAt: Instant?
    /// The profile's name (`nil`: the account's default, the first device's) and AAGUID override.
    let profileName: String?
    let aaguid: [UInt8]?
    let globalSignCount: UInt32
    /// Whether the device supports passkeys (tag 31 absent or `0`).
    let passkeysSupported: Bool

    var id: [UInt8] { record.id }
    /// Too many wrong PINs in a row: against its enrollment, or — on a reset device — its former one.
    var lockedOut: Bool { (enrollment != nil || formerEnrollment != nil) && failures >= maxAttempts }
    var isOnline: Bool { offline.last.map { $0.to != nil } ?? true }

    init(_ record: VaultRecord) throws(VaultError) {
        self.record = record
        enrollment = try Self.enrollment(record, Tag.salt, Tag.wrappedKey, Tag.opslimit, Tag.memlimit)
        formerEnrollment = try Self.enrollment(record, Tag.formerSalt, Tag.formerWrappedKey, Tag.formerOpslimit, Tag.formerMemlimit)
        failures = try record.integer(Tag.failures, as: UInt32.self) ?? 0
        maxAttempts = try record.integer(Tag.maxAttempts, as: UInt32.self) ?? Self.defaultMaxAttempts
        guard let name = String(validating: Array(record.field(Tag.name) ?? Array(Self.defaultName.utf8)[...]), as: UTF8.self),
              !name.isEmpty
        else { throw VaultError(.corrupted, "a device's name is not UTF-8") }
        self.name = name
        uploadDelay = try Self.delay(record, Tag.uploadDelay)
        downloadDelay = try Self.delay(record, Tag.downloadDelay)
        guard let offline = OfflineInterval.list(record.field(Tag.offline) ?? []) else {
            throw VaultError(.corrupted, "a device's offline intervals are malformed")
        }
        self.offline = offline
        syncedFrom = Instant(ms: try record.integer(Tag.syncedFrom, as: UInt64.self) ?? 0,
                             order: try record.integer(Tag.syncedFromOrder, as: UInt64.self) ?? 0)
        if let removed = record.field(Tag.removedAt) {
            guard let at = Instant(bytes: removed) else { throw VaultError(.corrupted, "a device's removal time is malformed") }
            removedAt = at
        } else {
            removedAt = nil
        }
        profileName = try record.field(Tag.profile).map { bytes throws(VaultError) in
            guard let name = String(validating: Array(bytes), as: UTF8.self) else { throw VaultError(.corrupted, "a device's profile is not UTF-8") }
            return name
        }
        aaguid = record.field(Tag.aaguid).map(Array.init)
        globalSignCount = try record.integer(Tag.globalSignCount, as: UInt32.self) ?? 0
        passkeysSupported = !(record.field(Tag.passkeysUnsupported)?.elementsEqual([1]) ?? false)
        guard aaguid == nil || aaguid!.count == 16 else { throw VaultError(.corrupted, "a device's AAGUID is not 16 bytes") }
    }

    static func setProfile(_ name: String?, aaguid: [UInt8]?, in record: inout VaultRecord) {
        record.setField(Tag.profile, name.map { Array($0.utf8) })
        record.setField(Tag.aaguid, aaguid)
    }

    private static func enrollment(_ record: VaultRecord, _ salt: UInt8, _ wrapped: UInt8, _ ops: UInt8,
                                   _ mem: UInt8) throws(VaultError) -> BiometryEnrollment? {
        guard let saltBytes = record.field(salt), let wrappedBytes = record.field(wrapped) else { return nil }
        guard let opslimit = try record.integer(ops, as: UInt64.self), let memlimit = try record.integer(mem, as: UInt64.self) else {
            throw VaultError(.corrupted, "a biometric enrollment lacks its KDF limits")
        }
        return try BiometryEnrollment(salt: Array(saltBytes), wrappedKey: Array(wrappedBytes), opslimit: opslimit, memlimit: memlimit)
    }

    private static func delay(_ record: VaultRecord, _ tag: UInt8) throws(VaultError) -> SettingHistory<DelayRange> {
        guard let bytes = record.field(tag) else { return SettingHistory() }
        guard let history = SettingHistory<DelayRange>(bytes: bytes) else { throw VaultError(.corrupted, "a device's sync delay is malformed") }
        return history
    }

    /// A new device's record (kind `settings` for the first device, `device` for the others).
    static func newRecord(kind: VaultRecord.Kind, name: String, enrollment: BiometryEnrollment?, maxAttempts: UInt32,
                          syncedFrom: Instant) -> VaultRecord {
        var record = VaultRecord(id: VaultRecord.newId(), kind: kind)
        record.setField(Tag.name, Array(name.utf8))
        record.setInteger(Tag.failures, UInt32(0))
        record.setInteger(Tag.maxAttempts, maxAttempts)
        setSyncedFrom(syncedFrom, in: &record)
        setEnrollment(enrollment, in: &record)
        return record
    }

    static func setEnrollment(_ enrollment: BiometryEnrollment?, in record: inout VaultRecord) {
        record.setField(Tag.salt, enrollment?.salt)
        record.setField(Tag.wrappedKey, enrollment?.wrappedKey)
        record.setInteger(Tag.opslimit, enrollment?.opslimit)
        record.setInteger(Tag.memlimit, enrollment?.memlimit)
    }

    static func setFormerEnrollment(_ enrollment: BiometryEnrollment?, in record: inout VaultRecord) {
        record.setField(Tag.formerSalt, enrollment?.salt)
        record.setField(Tag.formerWrappedKey, enrollment?.wrappedKey)
        record.setInteger(Tag.formerOpslimit, enrollment?.opslimit)
        record.setInteger(Tag.formerMemlimit, enrollment?.memlimit)
    }

    static func setHistory<Value>(_ history: SettingHistory<Value>, _ tag: UInt8, in record: inout VaultRecord) {
        record.setField(tag, history.entries.isEmpty ? nil : history.bytes)
    }

    static func setSyncedFrom(_ time: Instant, in record: inout VaultRecord) {
        record.setInteger(Tag.syncedFrom, time.ms)
        record.setInteger(Tag.syncedFromOrder, time.order)
    }

    static func setOffline(_ intervals: [OfflineInterval], in record: inout VaultRecord) {
        record.setField(Tag.offline, intervals.isEmpty ? nil : OfflineInterval.bytes(intervals))
    }

    /// Every device of the account: the first (the settings record) first, then the others in
    /// the order they were added. Removed devices are left out.
    static func all(in vault: Vault) throws(VaultError) -> [DeviceRecord] {
        try DeviceDirectory.of(vault).current
    }

    /// Every device record, removed devices too (whose uploaded changes still count). Decoded
    /// once and kept in step with each change (``DeviceDirectory``): every ceremony reads them.
    static func everyRecord(in vault: Vault) throws(VaultError) -> [DeviceRecord] {
        try DeviceDirectory.of(vault).every
    }

    /// Applies `change` to the live version of record `id` and commits it (with `others`, in one
    /// frame). Each change reads the record afresh, so the settings record's two readers (the
    /// first device and the account) never write over each other.
    static func update(_ id: [UInt8], in vault: Vault, with others: [VaultRecord] = [],
                       _ change: (inout VaultRecord) throws(VaultError) -> Void) throws(VaultError) {
        guard var record = try vault.record(id: id) else { throw VaultError(.invalid, "no such device record") }
        record.version += 1
        try change(&record)
        try vault.commit(others + [record])
    }
}
