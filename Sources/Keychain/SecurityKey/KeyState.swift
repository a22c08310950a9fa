@_spi(ByteOrder) import ByteOrder
import KeyVault
import VirtualAuthenticator

/// What a device answering as a security key keeps of its own across restarts, besides its
/// credentials and its PIN: its authenticatorConfig settings (CTAP 2.1 §6.11) and its serialized
/// large-blob array (§6.10). Defaults until a client changes them; a reset (authenticatorReset)
/// brings them back.
public struct KeySettings: Sendable, Equatable {
    /// alwaysUv: every ceremony needs a PIN token (makeCredUvNotRqd is then false).
    public var alwaysUv = false
    /// The shortest PIN setPIN and changePIN take, in Unicode code points: never lowered.
    public var minPINLength = Device.minimumPINLength
    /// The RP IDs the minPinLength extension reports ``minPINLength`` to.
    public var minPINLengthRPIDs = [String]()
    /// forcePINChange: the PIN must be changed before a PIN token is issued.
    public var forcePINChange = false
    /// The current PIN's length in code points, when it was set over CTAP (`nil`: not known, as
    /// for a PIN set as a biometric PIN).
    public var pinLength: Int?

    public init() {}
}

/// The key's state as a vault record of its own (kind 5, docs/vault-format.md, "Security key
/// record"), one per device that has any, beside its device record rather than in it: the
/// large-blob array is up to ``Device/maxSerializedLargeBlobArray`` bytes, and the device record
/// is written again at every assertion on the global counter. It does not sync: a key's
/// settings and blobs are the key's, as a USB key's are.
enum KeyStateRecord {
    static let kind = VaultRecord.Kind(rawValue: 5)

    enum Tag {
        static let deviceId: UInt8 = 1, alwaysUv: UInt8 = 2, minPINLength: UInt8 = 3, minPINLengthRPIDs: UInt8 = 4
        static let forcePINChange: UInt8 = 5, pinLength: UInt8 = 6, largeBlobArray: UInt8 = 7
    }

    /// The record's id: the device record's id with every byte XORed with `0x6b`, so it is found
    /// without a scan.
    static func id(of deviceId: [UInt8]) -> [UInt8] { deviceId.map { $0 ^ 0x6b } }

    /// The live record of device `deviceId`, if it has one. Records of this kind are few (one per
    /// key): a scan of them, which never reads the vault's passkey partitions.
    static func record(of deviceId: [UInt8], in vault: Vault) throws(VaultError) -> VaultRecord? {
        let id = id(of: deviceId)
        return try vault.unorderedRecords(kind: kind).first { $0.id == id }
    }

    static func settings(_ record: VaultRecord?) throws(VaultError) -> KeySettings {
        var settings = KeySettings()
        guard let record else { return settings }
        settings.alwaysUv = record.field(Tag.alwaysUv)?.elementsEqual([1]) ?? false
        settings.forcePINChange = record.field(Tag.forcePINChange)?.elementsEqual([1]) ?? false
        if let length = try record.integer(Tag.minPINLength, as: UInt32.self) { settings.minPINLength = Int(length) }
        if let length = try record.integer(Tag.pinLength, as: UInt32.self) { settings.pinLength = Int(length) }
        if let list = record.field(Tag.minPINLengthRPIDs) {
            guard let ids = rpIds(Array(list)) else { throw VaultError(.corrupted, "a security key's minPinLength RP IDs are malformed") }
            settings.minPINLengthRPIDs = ids
        }
        return settings
    }

    /// `settings` written into `record`, every field of it (a default leaves its tag out).
    static func set(_ settings: KeySettings, in record: inout VaultRecord) {
        record.setField(Tag.alwaysUv, settings.alwaysUv ? [1] : nil)
        record.setField(Tag.forcePINChange, settings.forcePINChange ? [1] : nil)
        record.setInteger(Tag.minPINLength, settings.minPINLength == Device.minimumPINLength ? nil : UInt32(settings.minPINLength))
        record.setInteger(Tag.pinLength, settings.pinLength.map { UInt32($0) })
        record.setField(Tag.minPINLengthRPIDs, settings.minPINLengthRPIDs.isEmpty ? nil : bytes(rpIds: settings.minPINLengthRPIDs))
    }

    /// RP IDs as the record holds them: per RP ID, its length u16 ‖ its UTF-8.
    static func bytes(rpIds: [String]) -> [UInt8] {
        rpIds.flatMap { id in BigEndianBytes.of(UInt16(id.utf8.count)) + Array(id.utf8) }
    }

    static func rpIds(_ bytes: [UInt8]) -> [String]? {
        var out = [String](), offset = 0
        while offset < bytes.count {
            guard bytes.count - offset >= 2 else { return nil }
            let length = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
            offset += 2
            guard bytes.count - offset >= length, let id = String(validating: bytes[offset..<offset + length], as: UTF8.self) else { return nil }
            out.append(id)
            offset += length
        }
        return out
    }

    /// Applies `change` to device `deviceId`'s record (made when it has none) and commits it.
    static func update(_ deviceId: [UInt8], in vault: Vault, _ change: (inout VaultRecord) throws(VaultError) -> Void) throws(VaultError) {
        var record = try record(of: deviceId, in: vault) ?? VaultRecord(id: id(of: deviceId), kind: kind, version: 0)
        record.version += 1
        record.setField(Tag.deviceId, deviceId)
        try change(&record)
        try vault.commit([record])
    }

    /// The tombstone that removes device `deviceId`'s record, if it has one: a reset's.
    static func removal(of deviceId: [UInt8], in vault: Vault) throws(VaultError) -> VaultRecord? {
        try record(of: deviceId, in: vault).map { VaultRecord(id: $0.id, kind: .tombstone, version: $0.version + 1) }
    }
}

/// The serialized large-blob array (CTAP 2.1 §6.10.1): a CBOR array followed by LEFT(SHA-256 of
/// it, 16).
public enum KeyLargeBlobs {
    /// The array a key holds before anything is written: an empty CBOR array (`0x80`) and its
    /// checksum.
    public static let initial: [UInt8] = [0x80] + checksum(of: [0x80])

    /// LEFT(SHA-256(`bytes`), 16).
    public static func checksum(of bytes: some Collection<UInt8>) -> [UInt8] { Array(SHA256.hash(Array(bytes)).prefix(16)) }

    /// Whether `array` ends with the checksum of what precedes it.
    public static func isIntact(_ array: [UInt8]) -> Bool {
        array.count >= 17 && checksum(of: array.dropLast(16)) == Array(array.suffix(16))
    }
}

extension Device {
    /// The most a key's serialized large-blob array holds (authenticatorGetInfo's
    /// maxSerializedLargeBlobArray; CTAP 2.1 asks for at least 1,024).
    public static let maxSerializedLargeBlobArray = 4096
    /// The most RP IDs setMinPINLength keeps (authenticatorGetInfo's maxRPIDsForSetMinPINLength).
    public static let maxRPIDsForSetMinPINLength = 8
    /// The longest PIN a key takes, in code points (CTAP 2.1: 63 bytes of UTF-8 at most).
    public static let maxKeyPINLength = 63

    /// This device's settings as a security key.
    public func keySettings() throws(DeviceError) -> KeySettings {
        do { return try KeyStateRecord.settings(KeyStateRecord.record(of: id, in: account.vault)) } catch { throw DeviceError(error) }
    }

    /// toggleAlwaysUv: alwaysUv turned over; returns it as it is now.
    @discardableResult
    public func toggleKeyAlwaysUv() throws(DeviceError) -> Bool {
        var now = false
        try changeKeySettings { settings throws(DeviceError) in
            settings.alwaysUv.toggle()
            now = settings.alwaysUv
        }
        return now
    }

    /// setMinPINLength: the shortest PIN raised to `length` (never lowered: `invalidArgument`),
    /// the RP IDs the minPinLength extension reports it to replaced by `rpIds` (at most
    /// ``maxRPIDsForSetMinPINLength``), and a PIN change forced when `forceChange` is set or the
    /// current PIN may now be too short (its length known to be below, or not known). Forcing a
    /// change needs a PIN.
    public func setKeyMinPINLength(_ length: Int?, rpIds: [String]?, forceChange: Bool) throws(DeviceError) {
        let pinSet = biometry.enrolled
        try changeKeySettings { settings throws(DeviceError) in
            let length = length ?? settings.minPINLength
            guard length >= settings.minPINLength else {
                throw DeviceError(.invalidArgument, "the minimum PIN length is \(settings.minPINLength) and is never lowered (asked: \(length))")
            }
            guard length <= Self.maxKeyPINLength else {
                throw DeviceError(.invalidArgument, "a minimum PIN length over \(Self.maxKeyPINLength) code points leaves no PIN possible")
            }
            if let rpIds {
                guard rpIds.count <= Self.maxRPIDsForSetMinPINLength else {
                    throw DeviceError(.invalidArgument, "at most \(Self.maxRPIDsForSetMinPINLength) RP IDs may read the minimum PIN length")
                }
                guard rpIds.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 253 }) else {
                    throw DeviceError(.invalidArgument, "an RP ID is empty or longer than a domain name")
                }
            }
            guard !forceChange || pinSet else { throw DeviceError(.invalidArgument, "no PIN is set to be changed") }
            // A raised minimum forces a change of a PIN that may be shorter: one known to be, or
            // one whose length is not known.
            let raised = length > settings.minPINLength
            settings.minPINLength = length
            if let rpIds { settings.minPINLengthRPIDs = rpIds }
            if forceChange || (pinSet && raised && (settings.pinLength.map { $0 < length } ?? true)) { settings.forcePINChange = true }
        }
    }

    /// Records a new PIN of this key, set or changed over CTAP: its length in code points, and
    /// no change forced any more.
    public func keyPINChanged(length: Int) throws(DeviceError) {
        try changeKeySettings { settings throws(DeviceError) in
            settings.pinLength = length
            settings.forcePINChange = false
        }
    }

    /// Applies `change` to this key's settings and writes them (nothing, when it throws).
    private func changeKeySettings(_ change: (inout KeySettings) throws(DeviceError) -> Void) throws(DeviceError) {
        _ = try record()  // a device of the account
        var settings = try keySettings()
        try change(&settings)
        do {
            try KeyStateRecord.update(id, in: account.vault) { record throws(VaultError) in KeyStateRecord.set(settings, in: &record) }
        } catch { throw DeviceError(error) }
    }

    /// The key's serialized large-blob array as last written whole (``KeyLargeBlobs/initial``
    /// before any write).
    public func keyLargeBlobArray() throws(DeviceError) -> [UInt8] {
        do { return try KeyStateRecord.record(of: id, in: account.vault)?.field(KeyStateRecord.Tag.largeBlobArray).map(Array.init) ?? KeyLargeBlobs.initial }
        catch { throw DeviceError(error) }
    }

    /// Replaces the key's serialized large-blob array with `array`, which must fit
    /// (``maxSerializedLargeBlobArray``) and end with its checksum (`invalidArgument` otherwise,
    /// nothing written).
    public func writeKeyLargeBlobArray(_ array: [UInt8]) throws(DeviceError) {
        guard array.count <= Self.maxSerializedLargeBlobArray else {
            throw DeviceError(.invalidArgument, "the large-blob array is \(array.count) bytes; the key holds \(Self.maxSerializedLargeBlobArray)")
        }
        guard KeyLargeBlobs.isIntact(array) else {
            throw DeviceError(.invalidArgument, "the large-blob array does not end with the checksum of its contents")
        }
        _ = try record()
        do {
            try KeyStateRecord.update(id, in: account.vault) { record throws(VaultError) in
                record.setField(KeyStateRecord.Tag.largeBlobArray, array == KeyLargeBlobs.initial ? nil : array)
            }
        } catch { throw DeviceError(error) }
    }
}
