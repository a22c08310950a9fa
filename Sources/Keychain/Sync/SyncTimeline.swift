/// When a change lands in the account store and when it reaches each device: a pure function of
/// when the change was made, the account's seed and delay histories, and each device's own delays,
/// offline spans, reset and removal (docs/sync.md, "The schedule"). It reads no vault and no
/// store, so it is tested on its own (SyncTimelineTests); the account feeds it its settings.
struct SyncTimeline {
    let seed: SettingHistory<Seed>
    let uploadDelays: SettingHistory<DelayRange>
    let downloadDelays: SettingHistory<DelayRange>

    /// The delay draws of a transfer that starts at `time`.
    func schedule(at time: Instant) -> SyncSchedule { SyncSchedule(seed: seed.value(at: time)?.value ?? 0) }

    /// The delays of `device` in force at `time`: its own, else the account's.
    func uploadDelay(of device: DeviceRecord, at time: Instant) -> DelayRange {
        device.uploadDelay.value(at: time) ?? uploadDelays.value(at: time) ?? .none
    }

    func downloadDelay(of device: DeviceRecord, at time: Instant) -> DelayRange {
        device.downloadDelay.value(at: time) ?? downloadDelays.value(at: time) ?? .none
    }

    /// When revision `id`, made by `origin` at `changedAt`, lands in the store. `nil`: not while
    /// its device is offline, or never — made before its device's reset or removal and not landed
    /// by then, it was lost with the device.
    func landing(of id: [UInt8], from origin: DeviceRecord, changedAt: Instant) -> Instant? {
        guard let start = SyncSchedule.firstOnline(after: changedAt, offline: origin.offline) else { return nil }
        let landed = start.after(schedule(at: start).delay(uploadDelay(of: origin, at: start), .upload, device: origin.name, revision: id))
        // Before the device's last reset (in write order, whatever the clock said): only what
        // had landed by the reset survived it.
        if changedAt.order < origin.syncedFrom.order && landed > origin.syncedFrom { return nil }
        if let removed = origin.removedAt, landed > removed { return nil }
        return landed
    }

    /// When revision `id`, landed at `landed`, reaches `device`: its download starts once it has
    /// landed and the device has been (re)started, and the device is online. `nil` while the
    /// device is offline.
    func arrival(of id: [UInt8], at device: DeviceRecord, landed: Instant) -> Instant? {
        guard let start = SyncSchedule.firstOnline(after: max(landed, device.syncedFrom), offline: device.offline) else { return nil }
        return start.after(schedule(at: start).delay(downloadDelay(of: device, at: start), .download, device: device.name, revision: id))
    }
}
