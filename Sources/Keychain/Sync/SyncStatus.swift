import KeyVault
import VirtualAuthenticator

/// What `authctl sync status` shows: per device, whether it is online, what it holds, what it has
/// made that has not landed in the store yet, and what has landed that it has not received yet —
/// each with the moment it will (or `nil`: not while the device is offline).
public struct SyncStatus: Encodable, Sendable {
    public struct Transfer: Encodable, Sendable {
        public let credentialId: String
        public let rpId: String
        public let userName: String
        public let removal: Bool
        public let changedAt: UInt64
        /// When it lands (an upload) or arrives (a download); `nil` while the device is offline.
        public let at: UInt64?
    }

    public struct DeviceStatus: Encodable, Sendable {
        public let name: String
        public let online: Bool
        public let biometryEnrolled: Bool
        public let syncedFrom: UInt64
        public let uploadDelay: String
        public let downloadDelay: String
        public let passkeys: Int
        public let pendingUploads: [Transfer]
        public let pendingDownloads: [Transfer]
    }

    public let now: UInt64
    public let seed: UInt64
    public let backupState: String
    public let uploadDelay: String
    public let downloadDelay: String
    public let storeInUse: Bool
    public let devices: [DeviceStatus]
}

extension Account {
    public func syncStatus() throws(DeviceError) -> SyncStatus {
        do {
            try sync()
            let devices = try DeviceRecord.all(in: vault)
            let local = try localRevisions()
            let store = storeRevisions
            let time = now
            func transfer(_ r: Revision, _ at: UInt64?) -> SyncStatus.Transfer {
                SyncStatus.Transfer(credentialId: Base64URL.encode(r.credential.id), rpId: r.credential.rpId,
                                    userName: r.credential.userName, removal: r.removed, changedAt: r.changedAt, at: at)
            }
            let statuses = try devices.map { device throws(VaultError) in
                let uploads = local.filter { $0.originId == device.id }.compactMap { r -> SyncStatus.Transfer? in
                    let landed = landedAt(r, devices: devices)
                    return landed.map { $0 > time } ?? true ? transfer(r, landed) : nil
                }
                // What has landed and not yet arrived, and what this vault's other devices made that
                // will land and then arrive.
                let inFlight = local.filter { r in r.originId != device.id && !store.contains { $0.id == r.id } }
                let downloads = (store.filter { !($0.originId == device.id && $0.changedAt >= device.syncedFrom) } + inFlight)
                    .compactMap { r -> SyncStatus.Transfer? in
                        let arrives = landedAt(r, devices: devices).flatMap { arrival(of: r, at: device, landed: $0) }
                        return arrives.map { $0 > time } ?? true ? transfer(r, arrives) : nil
                    }
                return SyncStatus.DeviceStatus(
                    name: device.name, online: device.isOnline, biometryEnrolled: device.enrollment != nil,
                    syncedFrom: device.syncedFrom, uploadDelay: uploadDelay(of: device, at: time).description,
                    downloadDelay: downloadDelay(of: device, at: time).description,
                    passkeys: try view(of: device).items.count,
                    pendingUploads: uploads.sorted { ($0.at ?? .max) < ($1.at ?? .max) },
                    pendingDownloads: downloads.sorted { ($0.at ?? .max) < ($1.at ?? .max) })
            }
            return SyncStatus(now: time, seed: settings.seed.value(at: time)?.value ?? 0, backupState: settings.backupStateImmediate ? "immediate" : "after-upload",
                              uploadDelay: (settings.uploadDelay.value(at: time) ?? .none).description,
                              downloadDelay: (settings.downloadDelay.value(at: time) ?? .none).description,
                              storeInUse: storeInUse, devices: statuses)
        } catch { throw DeviceError(error) }
    }
}
