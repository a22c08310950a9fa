/// The flags byte (WebAuthn L3 §6.1, "flags").
package struct AuthenticatorFlags: OptionSet, Equatable, Sendable {
    package let rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }

    package static let userPresent = AuthenticatorFlags(rawValue: 1 << 0)  // UP
    package static let userVerified = AuthenticatorFlags(rawValue: 1 << 2)  // UV
    package static let backupEligible = AuthenticatorFlags(rawValue: 1 << 3)  // BE
    package static let backupState = AuthenticatorFlags(rawValue: 1 << 4)  // BS
    package static let attestedCredentialData = AuthenticatorFlags(rawValue: 1 << 6)  // AT
    package static let extensionData = AuthenticatorFlags(rawValue: 1 << 7)  // ED

    package mutating func set(_ flag: AuthenticatorFlags, _ on: Bool) {
        if on { insert(flag) } else { remove(flag) }
    }
}
