/// The flags byte (WebAuthn L3 §6.1, "flags").
public struct AuthenticatorFlags: OptionSet, Equatable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let userPresent = AuthenticatorFlags(rawValue: 1 << 0)  // UP
    public static let userVerified = AuthenticatorFlags(rawValue: 1 << 2)  // UV
    public static let backupEligible = AuthenticatorFlags(rawValue: 1 << 3)  // BE
    public static let backupState = AuthenticatorFlags(rawValue: 1 << 4)  // BS
    public static let attestedCredentialData = AuthenticatorFlags(rawValue: 1 << 6)  // AT
    public static let extensionData = AuthenticatorFlags(rawValue: 1 << 7)  // ED

    public mutating func set(_ flag: AuthenticatorFlags, _ on: Bool) {
        if on { insert(flag) } else { remove(flag) }
    }
}
