import Synchronization
import VirtualAuthenticator

/// Time that moves only when told to: what a scenario runs on, so an hour of sync delay takes no
/// time at all and every run sees the same times.
public final class VirtualClock: Sendable {
    private let milliseconds: Mutex<UInt64>

    /// Starting at `start` milliseconds since the epoch.
    public init(start: UInt64) { milliseconds = Mutex(min(start, Self.end)) }

    /// The last moment the clock reaches: the end of the year 9999, as ``WallClock/latest``.
    public static let end: UInt64 = WallClock.latest

    public var now: UInt64 { milliseconds.withLock { $0 } }

    /// Moves forward by `delta` milliseconds, stopping at ``end``.
    public func advance(by delta: UInt64) { milliseconds.withLock { $0 = $0 > Self.end - min(delta, Self.end) ? Self.end : $0 + delta } }

    /// Moves to `time` (at most ``end``); a time already past leaves the clock where it is.
    public func advance(to time: UInt64) { milliseconds.withLock { $0 = max($0, min(time, Self.end)) } }

    /// The clock as the account reads it.
    public var wallClock: WallClock { WallClock { [self] in now } }
}
