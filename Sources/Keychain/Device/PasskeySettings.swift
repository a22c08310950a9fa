/// What kind of passkey a registration makes, beyond what the RP's options decide.
public struct PasskeySettings: Sendable, Equatable {
    /// Not backup eligible (BE=0, BS=0), instead of a synced passkey (BE=1, BS=1).
    public var deviceBound: Bool
    /// Counts its signatures (1, 2, 3, …) instead of always reporting 0 as synced passkeys do.
    public var signatureCounter: Bool

    public init(deviceBound: Bool = false, signatureCounter: Bool = false) {
        self.deviceBound = deviceBound
        self.signatureCounter = signatureCounter
    }
}
