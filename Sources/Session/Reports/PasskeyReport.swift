import Glibc
import Keychain
import VirtualAuthenticator

/// Everything the vault knows of one passkey, without its key: what `authctl credential show
/// --json` prints, each passkey of `authctl list --json`, what `authctl serve` answers for a passkey
/// and a scenario's `show` step carries (docs/reports.md, "Passkey").
public struct PasskeyReport: Encodable, Sendable, Equatable {
    public let id, rpId, userHandle, userName, userDisplayName, createdAt: String
    public let algorithm: String
    public let publicKeyAlgorithm: Int
    public let publicKey: String
    public let aaguid: String?
    public let profile: String?
    public let backupEligible, backupState, backupStateSetByHand: Bool
    public let signCount: UInt32
    public let signCounter: String
    public let userVerificationRequired: Bool
    /// Extensions' state: credProtect level (1 when none was asked), credBlob and large blob sizes.
    public let credProtect: Int
    public let credBlobBytes: Int?
    public let largeBlobBytes: Int?
    /// Hidden by the RP's signal (offered to no ceremony until a later signal lists it).
    public let hidden: Bool

    public init(_ c: Credential) {
        id = Base64URL.encode(c.id)
        rpId = c.rpId
        userHandle = Base64URL.encode(c.userHandle)
        userName = c.userName
        userDisplayName = c.userDisplayName
        createdAt = Self.timestamp(c.createdAt)
        algorithm = c.publicKey.algorithm.name
        publicKeyAlgorithm = c.publicKey.algorithm.rawValue
        publicKey = Base64URL.encode(c.publicKey.subjectPublicKeyInfo)
        aaguid = c.aaguid.count == 16 ? AuthenticatorProfile.formatAAGUID(c.aaguid) : nil
        profile = c.profile.isEmpty ? nil : c.profile
        backupEligible = c.backupEligible
        backupState = c.backupState
        backupStateSetByHand = c.backupStateFixed
        signCount = c.signCount
        signCounter = c.globalCounter ? SignCounter.global.rawValue : c.countsSignatures ? SignCounter.perCredential.rawValue : SignCounter.zero.rawValue
        userVerificationRequired = c.requiresUserVerification
        credProtect = Int(c.credProtect?.rawValue ?? 1)
        credBlobBytes = c.credBlob?.count
        largeBlobBytes = c.largeBlob.map { max(0, $0.count - LargeBlob.overhead) }
        hidden = c.hidden
    }

    /// RFC 3339 UTC, second precision (`gmtime_r` and `strftime`: a formatter per passkey, through
    /// ICU, took most of a 100,000-passkey listing), for every time a clock reads — up to the end
    /// of the year 9999, RFC 3339's last. A time past it (no clock reads one) is printed as its
    /// seconds.
    public static func timestamp(_ seconds: UInt64) -> String {
        guard seconds <= WallClock.latest / 1000 else { return String(seconds) }
        var time = time_t(seconds)
        var parts = tm()
        guard gmtime_r(&time, &parts) != nil else { return String(seconds) }
        var buffer = [CChar](repeating: 0, count: 32)
        let length = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%SZ", &parts)
        guard length > 0 else { return String(seconds) }
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// The passkeys a device holds, oldest first: what `authctl list --json` prints, `GET …/passkeys`
/// answers and a scenario's `holds` step carries.
public struct PasskeyListReport: Encodable, Sendable, Equatable {
    public let credentials: [PasskeyReport]

    public init(_ credentials: [Credential]) { self.credentials = credentials.map(PasskeyReport.init) }
}
