import Glibc

/// The calendar time a passkey records as its creation date, injected so scenario scripts can run
/// on a virtual clock. (Named apart from the standard library's `Clock` protocol, which measures
/// intervals; this reads the date.)
public struct WallClock: Sendable {
    public let now: @Sendable () -> UInt64  // seconds since the Unix epoch

    public init(now: @escaping @Sendable () -> UInt64) { self.now = now }

    public static let live = WallClock { UInt64(time(nil)) }
}
