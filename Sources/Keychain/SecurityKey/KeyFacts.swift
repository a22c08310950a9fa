import VirtualAuthenticator

/// What a device answering as a security key (CTAP2 over a socket) reports of itself in
/// authenticatorGetInfo: its model, whether a PIN is set, how many discoverable credentials it
/// holds, and its settings.
public struct KeyFacts: Sendable, Equatable {
    /// The device's profile, as its authenticator model.
    public let profile: AuthenticatorProfile
    /// The AAGUID it reports (the profile's, unless the device was given another).
    public let aaguid: [UInt8]
    /// Whether a PIN is set: the device's biometric PIN is the key's clientPIN.
    public let pinSet: Bool
    /// The PIN retries left (CTAP 2.1 §6.5.5.6: pinRetries), and the most there are.
    public let pinRetries: UInt32
    public let maxPINRetries: UInt32
    /// The discoverable credentials it holds, when counted (counting reads every one).
    public let discoverableCredentials: Int?
    /// Its authenticatorConfig settings.
    public let settings: KeySettings
}

extension Device {
    /// This device's ``KeyFacts``; its credentials counted only when `counting` (GetInfo's
    /// remainingDiscoverableCredentials): a sign-in needs no count.
    public func keyFacts(counting: Bool = false) throws(DeviceError) -> KeyFacts {
        let record = try record()
        let (profile, aaguid) = try account.profile(of: record)
        let status = biometry
        let count = counting ? try keyCredentials().count : nil
        return KeyFacts(profile: profile, aaguid: aaguid, pinSet: status.enrolled,
                        pinRetries: status.maxAttempts >= status.failures ? status.maxAttempts - status.failures : 0,
                        maxPINRetries: status.maxAttempts, discoverableCredentials: count, settings: try keySettings())
    }
}
