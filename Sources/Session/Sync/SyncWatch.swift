import Keychain
import VirtualAuthenticator

/// A transfer that happened: an upload landed in the account store, or a download reached a
/// device — what `sync events on` writes into the timeline, at the moment it happened.
public struct SyncEvent: Encodable, Sendable {
    /// Milliseconds since the watch's epoch (a scenario's beginning; the Unix epoch for a server).
    public let time: UInt64
    public let device: String
    /// `upload` or `download`.
    public let direction: String
    /// The passkey's label (its credential id when it has none).
    public let passkey: String
    /// A deletion rather than the passkey itself.
    public let removal: Bool

    public init(time: UInt64, device: String, direction: String, passkey: String, removal: Bool) {
        self.time = time
        self.device = device
        self.direction = direction
        self.passkey = passkey
        self.removal = removal
    }
}

/// Watches what is in flight between steps: a transfer that was pending with a time that has
/// come, and is pending no more, happened then.
package struct SyncWatch {
    private struct Transfer: Hashable {
        let device: String
        let upload: Bool
        let credentialId: String
        let removal: Bool
        let changedAt: UInt64
    }

    /// Each pending transfer, in the order sync status lists them, with when it happens (`nil`:
    /// not while a device is offline).
    private var pending = [(Transfer, UInt64?)]()

    /// The transfers that have happened since the last look, oldest first, named by `label`.
    package init() {}

    package mutating func look(_ status: SyncStatus, epoch: UInt64, label: (String) -> String) -> [SyncEvent] {
        var now = [(Transfer, UInt64?)]()
        for device in status.devices {
            for (upload, list) in [(true, device.pendingUploads), (false, device.pendingDownloads)] {
                for t in list {
                    now.append((Transfer(device: device.name, upload: upload, credentialId: t.credentialId, removal: t.removal,
                                         changedAt: t.changedAt), t.at))
                }
            }
        }
        let still = Set(now.map(\.0))
        let happened = pending.compactMap { transfer, at -> (Transfer, UInt64)? in
            guard let at, at <= status.now, !still.contains(transfer) else { return nil }
            return (transfer, at)
        }
        pending = now
        return happened.enumerated().sorted { ($0.element.1, $0.offset) < ($1.element.1, $1.offset) }.map { _, event in
            SyncEvent(time: event.1 - min(event.1, epoch), device: event.0.device, direction: event.0.upload ? "upload" : "download",
                      passkey: label(event.0.credentialId), removal: event.0.removal)
        }
    }
}

