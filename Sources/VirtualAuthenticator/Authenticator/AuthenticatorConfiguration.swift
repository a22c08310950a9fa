/// What kind of authenticator model this is, and what kind of passkeys it makes: a profile
/// (``AuthenticatorProfile``) and what a device or a registration changes of it.
public struct AuthenticatorConfiguration: Sendable {
    public var profile: AuthenticatorProfile
    /// The AAGUID (WebAuthn L3 §6.5.2) this authenticator reports: the profile's unless overridden.
    public var aaguid: [UInt8]
    /// Length of new credential ids: the profile's unless overridden (its wrapped-key length for a
    /// U2F registration, which keeps nothing on the key). WebAuthn wants at least 16 bytes of
    /// entropy, and CTAP 2.1 allows at most 1,023.
    public var credentialIdLength: Int
    /// BE/BS for new credentials: synced passkeys are backup eligible, and backed up once sync
    /// says so; a device-bound passkey is neither.
    public var backupEligible: Bool
    public var backupState: Bool
    /// How new credentials' signature counters move.
    public var signCounter: SignCounter
    /// How the client reaches this authenticator (`cross-platform` for a phone over hybrid).
    public var attachment: AuthenticatorAttachment
    /// A sign-in reports the attachment of the profile its passkey was made as (a security key's
    /// passkey answers `cross-platform`), not ``attachment``; `false` when the attachment was given.
    public var attachmentFollowsCredential: Bool
    /// Answer attestation with the profile's alternate format (`fido-u2f` for a security key).
    public var u2f: Bool
    /// Where attestation certificates come from (the vault's CA); without it, a format that needs
    /// one is `notSupported`.
    public var attestationCA: AttestationCA?
    /// The device's minimum PIN length, reported by the minPinLength extension (CTAP 2.1 §12.4);
    /// `nil`: the extension is not answered.
    public var minimumPINLength: Int?
    /// The RP IDs permitted enterprise attestation (WebAuthn L3 §5.4.7, `enterprise`): the client's
    /// policy, as an enterprise sets Chrome's `WebAuthenticationEnterpriseAttestation…` list. For
    /// other RP IDs, `enterprise` is answered as `none` with a zero AAGUID.
    public var enterpriseRelyingParties: Set<String> = []

    public init(profile: AuthenticatorProfile = .default, aaguid: [UInt8]? = nil, credentialIdLength: Int? = nil,
                backupEligible: Bool? = nil, backupState: Bool = true, signCounter: SignCounter? = nil,
                attachment: AuthenticatorAttachment? = nil, u2f: Bool = false,
                attestationCA: AttestationCA? = nil, minimumPINLength: Int? = nil) {
        let idLength = credentialIdLength ?? (u2f ? profile.wrappedCredentialIdLength : nil) ?? profile.credentialIdLength
        precondition((aaguid ?? profile.aaguid).count == 16 && (16...1023).contains(idLength))
        self.profile = profile
        self.aaguid = aaguid ?? profile.aaguid
        self.credentialIdLength = idLength
        self.backupEligible = backupEligible ?? profile.backupEligible
        self.backupState = self.backupEligible && backupState
        self.signCounter = signCounter ?? profile.signCounter
        self.attachment = attachment ?? profile.attachment
        self.attachmentFollowsCredential = attachment == nil
        self.u2f = u2f
        self.attestationCA = attestationCA
        self.minimumPINLength = minimumPINLength
    }

    /// The statement format answering an RP's conveyance preference.
    package func format(for conveyance: AttestationConveyance) -> AttestationFormat { profile.format(for: conveyance, u2f: u2f) }

    /// Whether the client permits enterprise attestation for `rpId` (in ``enterpriseRelyingParties``).
    package func permitsEnterpriseAttestation(rpId: String) -> Bool { enterpriseRelyingParties.contains(rpId) }

    /// Whether answering `conveyance` takes a certificate from the ``attestationCA``.
    package func needsCertificate(for conveyance: AttestationConveyance) -> Bool {
        let format = format(for: conveyance)
        return format != .none && !(format == .packed && profile.selfAttests)
    }

    /// authctl's AAGUID: 6f0e1a4c-2b3d-4e5f-8a9b-0c1d2e3f4a5b.
    public static let authctlAAGUID: [UInt8] = [
        0x6f, 0x0e, 0x1a, 0x4c, 0x2b, 0x3d, 0x4e, 0x5f, 0x8a, 0x9b, 0x0c, 0x1d, 0x2e, 0x3f, 0x4a, 0x5b,
    ]
}
