import KeyVault

/// Everything the schedule of a device's view depends on besides the RP's revisions: every
/// device's name, delays, reset, removal and offline spans (the origin of a revision decides when
/// it lands), the account's seed and delay histories, the BS rule, and the store generation. A
/// kept view is good while this stays the same; when it changes the view is made afresh.
struct ViewSchedule: Equatable {
    private static let deviceTags: [UInt8] = [
        DeviceRecord.Tag.name, DeviceRecord.Tag.uploadDelay, DeviceRecord.Tag.downloadDelay, DeviceRecord.Tag.syncedFrom,
        DeviceRecord.Tag.syncedFromOrder, DeviceRecord.Tag.removedAt, DeviceRecord.Tag.offline,
    ]

    private let devices: [[[UInt8]?]]
    private let seed: SettingHistory<Seed>
    private let uploadDelays: SettingHistory<DelayRange>
    private let downloadDelays: SettingHistory<DelayRange>
    private let backupStateImmediate: Bool
    private let storeGeneration: Int

    /// What of device record `d` a schedule depends on: its id and the fields of ``deviceTags``.
    static func fields(of d: DeviceRecord) -> [[UInt8]?] {
        [d.id] + deviceTags.map { tag in d.record.field(tag).map { Array($0) } }
    }

    /// The schedule of `device`'s view among every device record of `directory`, under
    /// `settings`. The records' fields come as the directory keeps them, read once per record
    /// version (``DeviceDirectory/scheduleFields``): a ceremony asks for a view at each step, and
    /// reading them again each time cost a dense day a tenth of its view work. Kept arrays compare
    /// equal at once (the same storage), so a kept view's check stays as cheap.
    init(of device: DeviceRecord, among directory: DeviceDirectory, settings: AccountSettings, storeGeneration: Int) {
        devices = [directory.scheduleFields(of: device)] + directory.scheduleFields
        seed = settings.seed
        uploadDelays = settings.uploadDelay
        downloadDelays = settings.downloadDelay
        backupStateImmediate = settings.backupStateImmediate
        self.storeGeneration = storeGeneration
    }

    /// The schedule of every device's transfers, for arrivals that do not depend on the store
    /// (``Account/FlightArrivals``): `every` device record, under `settings`.
    init(among every: [DeviceRecord], settings: AccountSettings) {
        devices = every.map { d in [d.id] + Self.deviceTags.map { tag in d.record.field(tag).map { Array($0) } } }
        seed = settings.seed
        uploadDelays = settings.uploadDelay
        downloadDelays = settings.downloadDelay
        backupStateImmediate = settings.backupStateImmediate
        storeGeneration = 0
    }
}

/// What one device holds of one RP, kept in step with the RP's ``RPHistory`` and the clock
/// rather than computed from all of the RP's revisions at each ceremony (docs/sync.md, "Kept
/// views"): each revision is scheduled once when the history gains it — visible at once (the
/// device's own, or arrived already), or queued by the moment it arrives — and each move of the
/// clock takes the arrivals that are due, and the passkeys whose BS flag turns on by then. Only
/// the passkeys a step touches are worked out again (``DeviceView/item(_:seen:at:landedAt:backupStateImmediate:)``).
///
/// It is kept only while its ``ViewSchedule``, its history (the same object: a history read
/// afresh is a new one), the passkeys kept home by a device-bound revision, and the direction of
/// the clock stay as they were; otherwise ``Account/keptView(of:rpId:)`` makes it afresh. It must
/// always equal the view computed from the records (``Account/viewFromRecords(of:rpId:)``,
/// IncrementalHistoryTests).
final class KeptDeviceView {
    let schedule: ViewSchedule
    let history: RPHistory
    private let deviceBound: Set<[UInt8]>
    /// How many of the history's changes have been taken in.
    private var consumed = 0
    private(set) var now = Instant.zero
    /// The revisions the device has, by passkey, with when it got each.
    private var seen = [[UInt8]: [(revision: Revision, at: Instant)]]()
    /// Revisions that reach the device later, the latest first (the next due is the last).
    private var arrivals = [(at: Instant, revision: Revision)]()
    /// Passkeys whose BS flag turns on later (their first landing), the latest first.
    private var turnOns = [(at: Instant, itemId: [UInt8])]()
    private(set) var view = DeviceView(ordered: [])

    init(schedule: ViewSchedule, history: RPHistory) {
        self.schedule = schedule
        self.history = history
        deviceBound = history.deviceBound
        view.reserveCapacity(history.byItem.count)
        seen.reserveCapacity(history.byItem.count)
    }

    /// Whether this view can be brought to `now` under `schedule` by what changed since.
    func holds(under schedule: ViewSchedule, history: RPHistory, at now: Instant) -> Bool {
        history === self.history && now >= self.now && schedule == self.schedule && history.deviceBound == deviceBound
    }

    /// Takes in the history's new changes and what is due by `now`.
    /// - Parameters:
    ///   - visibility: when a revision becomes part of what the device holds, and whether it is
    ///     the device's own (held whatever the clock says); `nil`: never.
    ///   - landedAt: when a revision reached the store.
    func advance(to now: Instant, visibility: (Revision) -> (at: Instant, own: Bool)?, landedAt: (Revision) -> Instant?,
                 backupStateImmediate: Bool) {
        var touched = Set<[UInt8]>()
        let changes = history.changes
        while consumed < changes.count {
            let (revision, added) = changes[consumed]
            consumed += 1
            if added {
                guard let (at, own) = visibility(revision) else { continue }
                if own || at <= now {
                    seen[revision.itemId, default: []].append((revision, at))
                    touched.insert(revision.itemId)
                } else {
                    arrivals.insert((at, revision), at: Self.place(of: at, count: arrivals.count) { arrivals[$0].at })
                }
            } else {
                if let i = seen[revision.itemId]?.firstIndex(where: { $0.revision.id == revision.id }) {
                    seen[revision.itemId]!.remove(at: i)
                    if seen[revision.itemId]!.isEmpty { seen[revision.itemId] = nil }
                    touched.insert(revision.itemId)
                }
                arrivals.removeAll { $0.revision.id == revision.id }
            }
        }
        while let next = arrivals.last, next.at <= now {
            arrivals.removeLast()
            seen[next.revision.itemId, default: []].append((next.revision, next.at))
            touched.insert(next.revision.itemId)
        }
        while let next = turnOns.last, next.at <= now {
            turnOns.removeLast()
            touched.insert(next.itemId)
        }
        self.now = now
        for itemId in touched {
            let (item, turnsOn) = DeviceView.item(itemId, seen: seen[itemId] ?? [], at: now, landedAt: landedAt,
                                                  backupStateImmediate: backupStateImmediate)
            if let item { view.put(item) } else { view.remove(itemId: itemId) }
            if let turnsOn { turnOns.insert((turnsOn, itemId), at: Self.place(of: turnsOn, count: turnOns.count) { turnOns[$0].at }) }
        }
    }

    /// Where `at` goes among `count` instants ordered latest first (`instant(i)`: the i-th).
    private static func place(of at: Instant, count: Int, _ instant: (Int) -> Instant) -> Int {
        var low = 0, high = count
        while low < high {
            let mid = (low + high) / 2
            if instant(mid) > at { low = mid + 1 } else { high = mid }
        }
        return low
    }
}

/// The account's kept views, by device id and RP, in the vault's derived values (they follow no
/// record themselves: what they depend on is checked each time one is asked for).
final class KeptDeviceViews {
    struct Key: Hashable {
        let device: [UInt8]
        let scope: HistoryScope
    }

    var byKey = [Key: KeptDeviceView]()
}
