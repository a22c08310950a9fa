import Glibc

/// The calendar time, injected so scenario scripts can run on a virtual clock: a passkey's creation
/// date, and the times a synced keychain schedules its uploads and downloads by. (Named apart from
/// the standard library's `Clock` protocol, which measures intervals; this one reads the date.)
public struct WallClock: Sendable {
    /// Milliseconds since the Unix epoch.
    public let milliseconds: @Sendable () -> UInt64

    public init(milliseconds: @escaping @Sendable () -> UInt64) { self.milliseconds = milliseconds }

    /// Seconds since the Unix epoch.
    public var seconds: UInt64 { milliseconds() / 1000 }

    /// The latest time a clock reads: the end of the year 9999. A system clock set before 1970
    /// reads as 1970, one set past this reads as this — never a crash, and every sum of a time
    /// and a delay stays far from overflowing.
    public static let latest: UInt64 = 253_402_300_799_999

    /// A clock that always reads `seconds`.
    public static func fixed(seconds: UInt64) -> WallClock { WallClock { min(seconds, latest / 1000) * 1000 } }

    public static let live = WallClock {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        guard now.tv_sec >= 0 else { return 0 }
        guard UInt64(now.tv_sec) < latest / 1000 else { return latest }
        return UInt64(now.tv_sec) * 1000 + UInt64(max(0, now.tv_nsec) / 1_000_000)
    }
}
