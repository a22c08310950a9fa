/// A discoverable credential (a passkey) as the authenticator keeps it — everything except the
/// private key, which a ``CredentialStore`` hands out only when a signature is needed.
public struct Credential: Equatable, Sendable {
    public var id: [UInt8]
    public var rpId: String
    public var userHandle: [UInt8]
    public var userName: String
    public var userDisplayName: String
    /// Seconds since the Unix epoch, from the injected ``WallClock``.
    public var createdAt: UInt64
    public var signCount: UInt32
    /// Backup eligibility (BE) and state (BS), WebAuthn L3 §6.1.3. Synced passkeys have both.
    public var backupEligible: Bool
    public var backupState: Bool
    /// The public key (its algorithm is the credential's), kept in clear so listing never touches
    /// a private key.
    public var publicKey: COSEKey
    /// Whether each assertion increments ``signCount`` (a device-bound habit) or leaves it at 0
    /// (what synced passkeys do).
    public var countsSignatures: Bool
    /// Made with user verification: its private key is sealed under the biometric key, so every
    /// use verifies the user (like CTAP 2.1 credProtect `userVerificationRequired`).
    public var requiresUserVerification: Bool
    /// The profile it was made as (``AuthenticatorProfile/name``; empty for passkeys from before
    /// profiles) and the AAGUID its registration reported.
    public var profile: String = ""
    public var aaguid: [UInt8] = []
    /// BS was set by hand (`credential set --backup-state`, as WebDriver's virtual authenticators
    /// allow) and sync no longer decides it.
    public var backupStateFixed = false
    /// Counts with the authenticator's one global counter (``SignCounter/global``) rather than its
    /// own; ``countsSignatures`` is true too.
    public var globalCounter = false
    /// credProtect (CTAP 2.1 §12.1) the registration asked for; `nil`: none (level 1 in effect).
    /// An additional policy: ``requiresUserVerification`` still seals the key of a passkey made
    /// with user verification.
    public var credProtect: CredentialProtectionPolicy?
    /// credBlob (CTAP 2.1 §12.2) stored at registration.
    public var credBlob: [UInt8]?
    /// The large blob (WebAuthn L3 §10.1.5), sealed under the key's largeBlobKey (``LargeBlob``).
    public var largeBlob: [UInt8]?
    /// Made with CTAP's largeBlobKey extension (WebAuthn's `largeBlob` support): the credential
    /// has a largeBlobKey (``LargeBlob/key(of:)``, derived from its private key), which a security
    /// key hands its client for the entries of its large-blob array (CTAP 2.1 §12.3).
    public var hasLargeBlobKey = false
    /// Hidden by the RP's signal (WebAuthn L3 §5.1.10.2, `signalAllAcceptedCredentials` not listing
    /// it): kept, and restored when a later list names it, but offered to no ceremony.
    public var hidden = false
    /// Discoverable (a resident key): found by a sign-in that lists no credential. Every passkey
    /// is; a security key's credential made with `rk` false is not, and is used only when an
    /// allow list names it (CTAP 2.1 §6.1.2 step 17, §6.2.2 step 7).
    public var discoverable = true

    public init(
        id: [UInt8], rpId: String, userHandle: [UInt8], userName: String, userDisplayName: String,
        createdAt: UInt64, signCount: UInt32, backupEligible: Bool, backupState: Bool, publicKey: COSEKey,
        countsSignatures: Bool = false, requiresUserVerification: Bool = false
    ) {
        self.id = id
        self.rpId = rpId
        self.userHandle = userHandle
        self.userName = userName
        self.userDisplayName = userDisplayName
        self.createdAt = createdAt
        self.signCount = signCount
        self.backupEligible = backupEligible
        self.backupState = backupState
        self.publicKey = publicKey
        self.countsSignatures = countsSignatures
        self.requiresUserVerification = requiresUserVerification
    }
}

extension Credential {
    /// Whether credProtect lets this credential take part in a ceremony that did (not) verify the
    /// user, where the RP did (not) list its id.
    package func isVisible(userVerified: Bool, listed: Bool) -> Bool {
        credProtect?.isVisible(userVerified: userVerified, listed: listed) ?? true
    }
}
