import KeyVault
@testable import Keychain
import Testing

// The sync timeline on its own: no vault, no store — devices as records, settings as histories.

private let t0: UInt64 = 1_800_000_000_000

private func at(_ ms: UInt64, order: UInt64 = 0) -> Instant { Instant(ms: t0 + ms, order: order) }

private func device(_ name: String, syncedFrom: Instant = at(0), offline: [OfflineInterval] = [], removedAt: Instant? = nil,
                    download: DelayRange? = nil) throws -> DeviceRecord {
    var record = DeviceRecord.newRecord(kind: .device, name: name, enrollment: nil, maxAttempts: 5, syncedFrom: syncedFrom)
    DeviceRecord.setOffline(offline, in: &record)
    if let removedAt { record.setField(DeviceRecord.Tag.removedAt, removedAt.bytes) }
    if let download {
        var history = SettingHistory<DelayRange>()
        history.set(download, from: .zero)
        DeviceRecord.setHistory(history, DeviceRecord.Tag.downloadDelay, in: &record)
    }
    return try DeviceRecord(record)
}

private func timeline(upload: String, download: String, seed: UInt64 = 7,
                      changes: [(at: Instant, upload: String?, download: String?)] = []) -> SyncTimeline {
    var ups = SettingHistory<DelayRange>(), downs = SettingHistory<DelayRange>(), seeds = SettingHistory<Seed>()
    ups.set(DelayRange(parsing: upload)!, from: .zero)
    downs.set(DelayRange(parsing: download)!, from: .zero)
    seeds.set(Seed(seed), from: .zero)
    for change in changes {
        if let u = change.upload { ups.set(DelayRange(parsing: u)!, from: change.at) }
        if let d = change.download { downs.set(DelayRange(parsing: d)!, from: change.at) }
    }
    return SyncTimeline(seed: seeds, uploadDelays: ups, downloadDelays: downs)
}

private let revision: [UInt8] = Array(repeating: 0x42, count: 16)

@Test func aChangeLandsAfterItsUploadDelayAndArrivesAfterEachDevicesDownloadDelay() throws {
    let line = timeline(upload: "2s", download: "3s")
    let phone = try device("phone"), laptop = try device("laptop"), tablet = try device("tablet", download: DelayRange(parsing: "30s"))
    let landed = try #require(line.landing(of: revision, from: phone, changedAt: at(1_000, order: 5)))
    #expect(landed == at(3_000))  // a delay ends at the start of its millisecond
    #expect(line.arrival(of: revision, at: laptop, landed: landed) == at(6_000))
    #expect(line.arrival(of: revision, at: tablet, landed: landed) == at(33_000))  // its own delay
}

@Test func anOfflineDeviceUploadsAndDownloadsOnlyOnceItIsBack() throws {
    let line = timeline(upload: "1s", download: "1s")
    let away = try device("phone", offline: [OfflineInterval(from: at(0), to: nil)])
    #expect(line.landing(of: revision, from: away, changedAt: at(500)) == nil)
    let back = try device("phone", offline: [OfflineInterval(from: at(0), to: at(10_000))])
    #expect(line.landing(of: revision, from: back, changedAt: at(500)) == at(11_000))
    let reader = try device("laptop", offline: [OfflineInterval(from: at(1_000), to: nil)])
    #expect(line.arrival(of: revision, at: reader, landed: at(2_000)) == nil)
    // A transfer under way when the device goes offline completes.
    let later = try device("laptop", offline: [OfflineInterval(from: at(2_500), to: nil)])
    #expect(line.arrival(of: revision, at: later, landed: at(2_000)) == at(3_000))
}

@Test func whatHadNotLandedByAResetOrARemovalIsLostWithTheDevice() throws {
    let line = timeline(upload: "5s", download: "0s")
    let reset = try device("phone", syncedFrom: at(3_000, order: 10))
    #expect(line.landing(of: revision, from: reset, changedAt: at(0, order: 1)) == nil)  // would land at 5 s
    #expect(line.landing(of: revision, from: try device("phone", syncedFrom: at(6_000, order: 10)), changedAt: at(0, order: 1)) == at(5_000))
    #expect(line.landing(of: revision, from: reset, changedAt: at(4_000, order: 11)) == at(9_000))  // made after it
    #expect(line.landing(of: revision, from: try device("phone", removedAt: at(4_000)), changedAt: at(0)) == nil)
    // A device added (or reset) after a change landed downloads it from then.
    #expect(timeline(upload: "0s", download: "2s").arrival(of: revision, at: try device("new", syncedFrom: at(60_000)), landed: at(1_000)) == at(62_000))
}

@Test func aTransferTakesTheDelayInForceWhenItStarts() throws {
    let line = timeline(upload: "1s", download: "1h", changes: [(at(10_000), nil, "2s")])
    let laptop = try device("laptop")
    #expect(line.arrival(of: revision, at: laptop, landed: at(5_000)) == at(5_000 + 3_600_000))  // started before the change
    #expect(line.arrival(of: revision, at: laptop, landed: at(10_000)) == at(12_000))
}

@Test func aRangeDrawsTheSameDelayForTheSameSeedDirectionDeviceAndChange() throws {
    let phone = try device("phone"), laptop = try device("laptop")
    var draws = Set<UInt64>()
    for byte in UInt8(0)..<64 {
        let id = [UInt8](repeating: byte, count: 16)
        let a = try #require(timeline(upload: "1s..5s", download: "0s", seed: 3).landing(of: id, from: phone, changedAt: at(0)))
        let b = try #require(timeline(upload: "1s..5s", download: "0s", seed: 3).landing(of: id, from: phone, changedAt: at(0)))
        #expect(a == b)
        #expect((t0 + 1_000...t0 + 5_000).contains(a.ms))
        draws.insert(a.ms)
        #expect(timeline(upload: "1s..5s", download: "0s", seed: 3).landing(of: id, from: laptop, changedAt: at(0)) != nil)
    }
    #expect(draws.count > 32)  // spread over the range, not one value
    let other = (UInt8(0)..<64).map { timeline(upload: "1s..5s", download: "0s", seed: 4).landing(of: [UInt8](repeating: $0, count: 16), from: phone, changedAt: at(0))!.ms }
    #expect(Set(other) != draws)  // another seed, other draws
}
