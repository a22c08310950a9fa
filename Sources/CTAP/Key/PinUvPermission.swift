/// What a pinUvAuthToken may be used for (CTAP 2.1 §6.5.5.7, "pinUvAuthToken permissions"): the
/// `permissions` bits of getPinUvAuthTokenUsingPinWithPermissions. A token from getPinToken
/// (CTAP 2.0's way) has ``default``, makeCredential and getAssertion.
struct PinUvPermission: OptionSet, Sendable, Hashable {
    let rawValue: UInt8

    /// mc: authenticatorMakeCredential.
    static let makeCredential = PinUvPermission(rawValue: 0x01)
    /// ga: authenticatorGetAssertion.
    static let getAssertion = PinUvPermission(rawValue: 0x02)
    /// cm: authenticatorCredentialManagement.
    static let credentialManagement = PinUvPermission(rawValue: 0x04)
    /// be: authenticatorBioEnrollment.
    static let bioEnrollment = PinUvPermission(rawValue: 0x08)
    /// lbw: writing authenticatorLargeBlobs.
    static let largeBlobWrite = PinUvPermission(rawValue: 0x10)
    /// acfg: authenticatorConfig.
    static let authenticatorConfiguration = PinUvPermission(rawValue: 0x20)

    /// The permissions CTAP 2.1 defines; other bits a client sends are ignored (§6.5.5.7.2 step 4).
    static let defined: PinUvPermission = [.makeCredential, .getAssertion, .credentialManagement, .bioEnrollment,
                                                 .largeBlobWrite, .authenticatorConfiguration]
    /// A getPinToken token's (§6.5.5.7.1 step 14: noMcGaPermissionsWithClientPin is absent).
    static let `default`: PinUvPermission = [.makeCredential, .getAssertion]

    /// The option of authenticatorGetInfo each permission needs set to true, else a token with it
    /// is CTAP2_ERR_UNAUTHORIZED_PERMISSION (§6.5.5.7.2 step 4): mc and ga need none (the key
    /// never sets noMcGaPermissionsWithClientPin), be needs bioEnroll present, which it never is.
    static let options: [(PinUvPermission, String)] = [
        (.credentialManagement, "credMgmt"), (.bioEnrollment, "bioEnroll"), (.largeBlobWrite, "largeBlobs"),
        (.authenticatorConfiguration, "authnrCfg"),
    ]
}
