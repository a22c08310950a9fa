import COpenSSL

/// Where the authenticator's randomness comes from: credential ids, and challenges a caller
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
