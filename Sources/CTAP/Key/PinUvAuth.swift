import Session

/// What a pinUvAuthParam proved (CTAP 2.1 §6.5.5.7's token, checked against the request it
/// authorizes): the key's verification, kept with the token.
struct PinUvAuthorization {
    let verification: KeyVerification
}

/// The permissions a pinUvAuthToken may carry (CTAP 2.1 §6.5.5.7).
struct PinUvPermission: OptionSet, Sendable {
    let rawValue: UInt8
    static let makeCredential = PinUvPermission(rawValue: 0x01)
    static let getAssertion = PinUvPermission(rawValue: 0x02)
    static let credentialManagement = PinUvPermission(rawValue: 0x04)
    static let bioEnrollment = PinUvPermission(rawValue: 0x08)
    static let largeBlobWrite = PinUvPermission(rawValue: 0x10)
    static let authenticatorConfiguration = PinUvPermission(rawValue: 0x20)
}

extension SecurityKey {
    /// Checks `param`, a pinUvAuthParam over `message` made with protocol `version`, against the
    /// current pinUvAuthToken, its `permission` and its RP binding (`rpId`).
    func authorize(_ param: [UInt8], version: Int, message: [UInt8], permission: PinUvPermission,
                   rpId: String?) throws(CTAPStatus) -> PinUvAuthorization {
        // No token is issued before authenticatorClientPIN is there: none can match.
        throw .pinAuthInvalid
    }
}
