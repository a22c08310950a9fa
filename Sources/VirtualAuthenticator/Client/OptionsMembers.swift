/// Members both options dictionaries have, read the way the browser reads them.
extension JSONReader {
    /// The shortest a prompt stays up, whatever the options ask: ten seconds (Chromium clamps
    /// `timeout` to 10 s … 10 min; WebAuthn L3 §5.1.3 step 3 lets the client adjust it).
    static let minimumTimeoutMilliseconds = 10_000
    /// The longest: ten minutes.
    static let maximumTimeoutMilliseconds = 600_000

    /// `timeout` (`unsigned long`): the WebIDL value clamped to 10 s … 10 min; `nil` when absent
    /// (the user's default applies, 300,000 ms).
    func timeout() -> Int? {
        unsignedLong("timeout").map(Self.effectiveTimeout)
    }

    /// The timeout the client uses for a converted `timeout` value.
    package static func effectiveTimeout(_ requested: UInt32) -> Int {
        min(max(Int(requested), minimumTimeoutMilliseconds), maximumTimeoutMilliseconds)
    }

    /// A list of PublicKeyCredentialDescriptorJSON (`id` and `type` required, `transports` a
    /// sequence of strings): every id is decoded, as parse…FromJSON does, but only those of type
    /// `public-key` are returned (§5.1.3 step 20, §5.1.4.1: other types are skipped).
    func descriptorIds(_ key: String) throws(AuthenticatorError) -> [[UInt8]] {
        try descriptors(key).map(\.id)
    }

    /// As ``descriptorIds(_:)``, with each descriptor's `transports` as given.
    func descriptors(_ key: String) throws(AuthenticatorError) -> [(id: [UInt8], transports: [String])] {
        var out = [(id: [UInt8], transports: [String])]()
        for d in try readers(key) {
            let id = try d.bytes("id")
            let transports = try d.strings("transports")
            if try d.string("type") == "public-key" { out.append((id, transports)) }
        }
        return out
    }

    /// The RP's empty challenge: accepted as Chromium does, with a warning (refused with `strict`).
    func acceptChallenge(_ challenge: [UInt8]) throws(AuthenticatorError) {
        guard challenge.isEmpty else { return }
        try accept("options.challenge is empty: the response proves no freshness, and the RP cannot tell it from a replayed one (a replay hole)",
                   unlessStrict: AuthenticatorError(.badInput, "options.challenge is empty (refused with --strict)"))
    }

    /// `userVerification`; unknown values fall back to the default, "preferred" (§2.1.1: ignore
    /// unknown enum values).
    func userVerification() -> UserVerificationRequirement {
        optionalString("userVerification").flatMap(UserVerificationRequirement.init(rawValue:)) ?? .preferred
    }
}
