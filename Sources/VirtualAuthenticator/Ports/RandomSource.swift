import COpenSSL

/// Where the authenticator's randomness comes from: credential ids, and challenges the CLI
/// invents. Injected so tests and scenarios can be deterministic.
public struct RandomSource: Sendable {
    public let bytes: @Sendable (Int) -> [UInt8]

    public init(bytes: @escaping @Sendable (Int) -> [UInt8]) { self.bytes = bytes }

    /// OpenSSL's CSPRNG.
    public static let live = RandomSource { count in
        var out = [UInt8](repeating: 0, count: count)
        precondition(RAND_bytes(&out, Int32(count)) == 1, "RAND_bytes failed")
        return out
    }
}

/// The time, injected for the same reason: scenario scripts will run on a virtual clock.
public struct Clock: Sendable {
    public let now: @Sendable () -> UInt64  // seconds since the Unix epoch

    public init(now: @escaping @Sendable () -> UInt64) { self.now = now }

    public static let live = Clock { UInt64(time(nil)) }
}
