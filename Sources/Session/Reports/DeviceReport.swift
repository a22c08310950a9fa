import Keychain

/// One device of the account: what `authctl device list --json` prints for each, what `authctl
/// device add | offline | online | reset | unsupported --json` print after the change, what
/// `authctl serve` answers for a device and a scenario's device steps carry (docs/reports.md,
/// "Device"). A device of another vault sharing the store is known only as that vault published
/// it: no passkey count, biometry or passkey support, no pending transfers.
public struct DeviceReport: Encodable, Sendable {
    public let name: String
    /// `"this"`, or the id of the vault the device lives in (32 hex digits).
    public let vault: String
    public let online: Bool
    /// `nil` (absent) for another vault's device.
    public let passkeysSupported: Bool?
    /// `nil` (absent) for another vault's device, which publishes only ``biometryEnrolled``.
    public let biometry: BiometryStatus?
    public let biometryEnrolled: Bool
    public let passkeys: Int?
    public let syncedFrom: UInt64
    public let acknowledged: UInt64?
    public let uploadDelay: String
    public let downloadDelay: String
    public let pendingUploads: [SyncStatus.Transfer]
    public let pendingDownloads: [SyncStatus.Transfer]

    init(_ d: SyncStatus.DeviceStatus, in session: Session) throws(SessionError) {
        let here = d.vault == "this"
        name = d.name
        vault = d.vault
        online = d.online
        passkeysSupported = here ? try session.passkeysSupported(device: d.name) : nil
        biometry = here ? try session.biometry(device: d.name) : nil
        biometryEnrolled = d.biometryEnrolled
        passkeys = d.passkeys
        syncedFrom = d.syncedFrom
        acknowledged = d.acknowledged
        uploadDelay = d.uploadDelay
        downloadDelay = d.downloadDelay
        pendingUploads = d.pendingUploads
        pendingDownloads = d.pendingDownloads
    }
}

/// The account's devices, this vault's first (then other vaults', as they published themselves
/// in the store): what `authctl device list --json` prints and `GET …/devices` answers (this
/// vault's alone: a server's account has no other).
public struct DeviceListReport: Encodable, Sendable {
    public let devices: [DeviceReport]

    public init(_ devices: [DeviceReport]) { self.devices = devices }
}

extension Session {
    /// Every device of the account as ``DeviceReport``s, from one sync status.
    public func deviceReports() throws(SessionError) -> [DeviceReport] {
        try syncStatus().devices.map { d throws(SessionError) in try DeviceReport(d, in: self) }
    }

    /// Device `name` of this vault as a ``DeviceReport``; `usage` when the account has none.
    public func deviceReport(_ name: String) throws(SessionError) -> DeviceReport {
        guard let d = try syncStatus().devices.first(where: { $0.name == name && $0.vault == "this" }) else {
            throw SessionError(.usage, "no device \(EchoedInput.text(name))")
        }
        return try DeviceReport(d, in: self)
    }
}
