@_spi(ByteOrder) import ByteOrder
import VirtualAuthenticator

/// When a change lands in the account store and when it reaches a device: computed from the times
/// events happened, so no process has to be running when they do. Opening a device at any time
/// gives the same answer as if a daemon had moved every change at the moment it arrived.
///
/// - An upload starts when its change is made, or when its device next comes online, and lands
///   after the device's upload delay.
/// - A download of an object starts once it has landed and the device has been (re)started — its
///   `syncedFrom`, when it was added or last reset — and the device is online; it arrives after
///   the device's download delay.
/// - A delay drawn from a range is a function of the account's seed, the direction, the device and
///   the change: the same scenario gives the same times, in any order of evaluation.
struct SyncSchedule {
    let seed: UInt64

    enum Direction: String { case upload, download }

    private static let domain = Array("AUTHCTL-SYNC".utf8)

    /// The delay for one transfer, drawn deterministically from `range` (at most
    /// ``DelayRange/maximum``, so the arithmetic cannot overflow).
    func delay(_ range: DelayRange, _ direction: Direction, device: String, revision: [UInt8]) -> UInt64 {
        guard range.upper > range.lower else { return range.lower }
        // "AUTHCTL-SYNC" ‖ seed u64 ‖ direction ‖ 0 ‖ device ‖ 0 ‖ revision, put together in one
        // buffer of its size (a draw per transfer: a dense day makes tens of thousands).
        var input = [UInt8]()
        input.reserveCapacity(Self.domain.count + 8 + 8 + 2 + device.utf8.count + revision.count)
        input.append(contentsOf: Self.domain)
        withUnsafeBytes(of: seed.bigEndian) { input.append(contentsOf: $0) }
        input.append(contentsOf: direction.rawValue.utf8)
        input.append(0)
        input.append(contentsOf: device.utf8)
        input.append(0)
        input.append(contentsOf: revision)
        let digest = SHA256.hash(input)
        let draw: UInt64 = BigEndianBytes.integer(digest.prefix(8))
        return range.lower + draw % (range.upper - range.lower + 1)
    }

    /// The first moment at or after `time` when a device with these offline intervals is online;
    /// `nil` when it went offline at or before then and has not come back.
    static func firstOnline(after time: Instant, offline: [OfflineInterval]) -> Instant? {
        var t = time
        for interval in offline.sorted(by: { $0.from < $1.from }) where interval.from <= t {
            guard let end = interval.to else { return nil }
            if end > t { t = end }
        }
        return t
    }
}

/// A span of time a device was offline: `to` is `nil` while it still is.
package struct OfflineInterval: Equatable, Sendable {
    let from: Instant
    let to: Instant?

    /// The list as a vault field holds it: from ‖ to (16 + 16 bytes, ``Instant/bytes``) per
    /// interval, oldest first; `to` is all ones while offline.
    static func bytes(_ intervals: [OfflineInterval]) -> [UInt8] {
        intervals.flatMap { $0.from.bytes + ($0.to ?? Instant(ms: .max, order: .max)).bytes }
    }

    static func list(_ bytes: some Collection<UInt8>) -> [OfflineInterval]? {
        guard bytes.count % 32 == 0 else { return nil }
        let array = Array(bytes)
        var out = [OfflineInterval]()
        for i in stride(from: 0, to: array.count, by: 32) {
            guard let from = Instant(bytes: array[i..<i + 16]), let to = Instant(bytes: array[i + 16..<i + 32]) else { return nil }
            let open = to == Instant(ms: .max, order: .max)
            guard open || from <= to else { return nil }
            out.append(OfflineInterval(from: from, to: open ? nil : to))
        }
        return out
    }
}
