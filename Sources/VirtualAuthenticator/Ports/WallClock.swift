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

    /// A clock that always reads `seconds`.
    public static func fixed(seconds: UInt64) -> WallClock { WallClock { seconds * 1000 } }

    public static let live = WallClock {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return UInt64(now.tv_sec) * 1000 + UInt64(now.tv_nsec / 1_000_000)
    }
}
