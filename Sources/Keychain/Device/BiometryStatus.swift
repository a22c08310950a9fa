/// The simulated Face ID's state, as `authctl biometry status` shows it.
public struct BiometryStatus: Sendable, Equatable, Encodable {
    public let enrolled: Bool
    /// Consecutive wrong PINs since the last right one.
    public let failures: UInt32
    /// Consecutive wrong PINs that lock biometry out.
    public let maxAttempts: UInt32
    public let lockedOut: Bool
}
