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

        enum CodingKeys: String, CodingKey { case credentialId, rpId, userName, removal, changedAt, at }

        /// `at` is always there, `null` while the device is offline (docs/reports.md, "Sync status").
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(credentialId, forKey: .credentialId)
            try c.encode(rpId, forKey: .rpId)
            try c.encode(userName, forKey: .userName)
            try c.encode(removal, forKey: .removal)
            try c.encode(changedAt, forKey: .changedAt)
            if let at { try c.encode(at, forKey: .at) } else { try c.encodeNil(forKey: .at) }
        }
    }

    /// A device of the account: of this vault (`vault` is `"this"`), with what it holds and what is
    /// pending; or of another vault sharing the store (`vault` is that vault's id, 32 hex digits), as
    /// that vault last published it — no passkey count (`nil`) and no pending transfers, which only
    /// its own vault computes.
    public struct DeviceStatus: Encodable, Sendable {
        public let name: String
        public let vault: String
        public let online: Bool
        public let biometryEnrolled: Bool
        public let syncedFrom: UInt64
        public let uploadDelay: String
        public let downloadDelay: String
        public let passkeys: Int?
        /// The store's changes up to this sequence have reached the device, as published in the
        /// store's directory; `nil` before it was (docs/sync.md, "Collection").
        public let acknowledged: UInt64?
        public let pendingUploads: [Transfer]
        public let pendingDownloads: [Transfer]
    }

    public let now: UInt64
    public let seed: UInt64
    public let backupState: String
    public let uploadDelay: String
    public let downloadDelay: String
    public let storeInUse: Bool
    /// Why the account store is set aside, when it is; else what is wrong in the store in use —
    /// its open problems (``storeProblems``), objects it cannot read (passed over), revisions too
    /// large to upload (sync.md, "The store").
    public let storeProblem: String?
    /// What this vault found the store doing that it must not, each with its kind, open and
    /// lately healed (sync.md, "What the devices check").
    public let storeProblems: [StoreProblem]
    /// This vault's devices first, then other vaults' (by the store's directory).
    public let devices: [DeviceStatus]
}

extension Account {
    /// A device of another vault, as it published itself.
    private static func status(_ d: PublishedDevice) -> SyncStatus.DeviceStatus {
        SyncStatus.DeviceStatus(name: d.name, vault: Hex.string(d.vaultId), online: d.online, biometryEnrolled: d.enrolled,
                                syncedFrom: d.syncedFrom, uploadDelay: d.uploadDelay.description, downloadDelay: d.downloadDelay.description,
                                passkeys: nil, acknowledged: d.acknowledged, pendingUploads: [], pendingDownloads: [])
    }

    public func syncStatus() throws(DeviceError) -> SyncStatus {
        readStoreForRequest()  // only read: a look at sync changes nothing (`sync now` syncs as it opens)
        do {
            let history = try history()
            let now = present
            func transfer(_ r: Revision, _ at: Instant?) -> SyncStatus.Transfer {
                SyncStatus.Transfer(credentialId: Base64URL.encode(r.credential.id), rpId: r.credential.rpId,
                                    userName: r.credential.userName, removal: r.removed, changedAt: r.changedAt.ms, at: at?.ms)
            }
            let published = Dictionary((accountDirectory?.devices ?? []).map { ($0.id, $0.acknowledged) }, uniquingKeysWith: { a, _ in a })
            let statuses = try history.current.map { device throws(VaultError) in
                var uploads = [SyncStatus.Transfer](), downloads = [SyncStatus.Transfer]()
                for r in history.revisions where !history.deviceBound.contains(r.itemId) {
                    let own = r.originId == device.id && r.changedAt.order >= device.syncedFrom.order
                    let landed = landedAt(r, in: history)
                    if own {
                        // Its own change, until it lands (nil: waiting for the device to be online).
                        if landed.map({ $0 > now }) ?? true { uploads.append(transfer(r, landed)) }
                        continue
                    }
                    // Someone else's (or its own from before a reset): until it arrives here. A
                    // change that will never land (lost with its device) is not pending.
                    guard landed != nil || history.devices[r.originId].map({ !$0.isOnline && $0.removedAt == nil }) == true else { continue }
                    let arrives = landed.flatMap { arrival(of: r.id, at: device, landed: $0) }
                    if arrives.map({ $0 > now }) ?? true { downloads.append(transfer(r, arrives)) }
                }
                return SyncStatus.DeviceStatus(
                    name: device.name, vault: "this", online: device.isOnline, biometryEnrolled: device.enrollment != nil,
                    syncedFrom: device.syncedFrom.ms, uploadDelay: uploadDelay(of: device, at: now).description,
                    downloadDelay: downloadDelay(of: device, at: now).description,
                    passkeys: try view(of: device).count, acknowledged: published[device.id],
                    pendingUploads: uploads.sorted { ($0.at ?? .max) < ($1.at ?? .max) },
                    pendingDownloads: downloads.sorted { ($0.at ?? .max) < ($1.at ?? .max) })
            }
            return SyncStatus(now: now.ms, seed: settings.seed.value(at: now)?.value ?? 0,
                              backupState: settings.backupStateImmediate ? "immediate" : "after-upload",
                              uploadDelay: (settings.uploadDelay.value(at: now) ?? .none).description,
                              downloadDelay: (settings.downloadDelay.value(at: now) ?? .none).description,
                              storeInUse: storeLink.state != nil, storeProblem: storeProblemSummary, storeProblems: storeProblems,
                              devices: statuses + devicesElsewhere.map(Self.status))
        } catch { throw DeviceError(error) }
    }
}
