import VirtualAuthenticator

/// What kind of passkey a registration makes, beyond what the RP's options and the device's
/// profile decide.
public struct PasskeySettings: Sendable, Equatable {
    /// Not backup eligible (BE=0, BS=0), whatever the profile makes.
    public var deviceBound: Bool
    /// Counts its signatures (1, 2, 3, …), whatever the profile does.
    public var signatureCounter: Bool
    /// How its counter moves, instead of the profile's (wins over `signatureCounter`).
    public var counter: SignCounter?
    /// The profile to answer as for this registration instead of the device's (by name).
    public var profile: String?
    /// An AAGUID instead of the profile's.
    public var aaguid: [UInt8]?
    /// Answer attestation with the profile's alternate format (`fido-u2f` for `security-key`).
    public var u2f: Bool
    /// RP IDs for which `attestation: "enterprise"` gets the profile's attestation and AAGUID (the
    /// browser's enterprise policy); for others it is answered as `none` with a zero AAGUID.
    public var enterpriseRelyingParties: [String]

    public init(deviceBound: Bool = false, signatureCounter: Bool = false, profile: String? = nil,
                aaguid: [UInt8]? = nil, u2f: Bool = false, counter: SignCounter? = nil, enterpriseRelyingParties: [String] = []) {
        self.enterpriseRelyingParties = enterpriseRelyingParties
        self.counter = counter
        self.deviceBound = deviceBound
        self.signatureCounter = signatureCounter
        self.profile = profile
        self.aaguid = aaguid
        self.u2f = u2f
    }
}

/// A passkey's signature counter as WebDriver's virtual authenticators set it (WebAuthn L3 §11,
/// `signCount`): a counter that goes on from a value, or none — every assertion then reports 0 and
/// nothing counts.
public enum SignatureCounterSetting: Sendable, Equatable {
    case counting(from: UInt32)
    case noCounter
}
