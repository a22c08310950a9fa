/// Members both options dictionaries have, read the way the browser reads them.
extension JSONReader {
    /// The longest a prompt stays up, whatever the options ask: ten minutes, as browsers clamp
    /// `timeout` (WebAuthn L3 §5.4, "timeout": the client may adjust it).
    static let maximumTimeoutMilliseconds = 600_000

    func timeout() throws(AuthenticatorError) -> Int? {
        try int("timeout").map { min(max($0, 0), Self.maximumTimeoutMilliseconds) }
    }

    /// The ids of a list of PublicKeyCredentialDescriptorJSON; entries of other types are skipped.
    func descriptorIds(_ key: String) throws(AuthenticatorError) -> [[UInt8]] {
        var ids = [[UInt8]]()
        for d in try readers(key) where try d.string("type") == "public-key" {
            ids.append(try d.bytes("id"))
        }
        return ids
    }

    /// `userVerification`; unknown values fall back to the default, "preferred" (§5.8.6: ignore
    /// unknown enum values).
    func userVerification() throws(AuthenticatorError) -> UserVerificationRequirement {
        guard let raw = try optionalString("userVerification") else { return .preferred }
        return UserVerificationRequirement(rawValue: raw) ?? .preferred
    }
}
