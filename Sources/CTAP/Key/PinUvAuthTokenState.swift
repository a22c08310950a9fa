import Foundation
import Session

/// The pinUvAuthToken's state (CTAP 2.1 §6.5.2.1) and its maintenance (§6.5.5.1): whether the
/// token is in use, for what (permissions, the permissions RP ID), with which flags, and for how
/// long. One for the key, whatever the protocol: each protocol has a token of its own
/// (``PinUvAuthProtocol/pinUvAuthToken``), all reset together whenever one is issued, so only the
/// latest is ever in use. Lives only while the key has power.
struct PinUvAuthTokenState {
    /// How long after it is issued a token stays usable if no request uses it: USB's default
    /// maximum initial usage time limit.
    static let initialUsageTimeLimit: TimeInterval = 30
    /// How long after it is issued a used token stays usable: the default max usage time period.
    static let maxUsageTimePeriod: TimeInterval = 600
    /// How long after the token was issued with user presence that presence still counts.
    static let userPresentTimeLimit: TimeInterval = 30

    private(set) var inUse = false
    private(set) var permissions: PinUvPermission = []
    /// The permissions RP ID: the RP the token is bound to (`nil`: none yet).
    var permissionsRPID: String?
    private(set) var userVerified = false
    private(set) var userPresent = false
    /// The proof of the PIN that earned the token, kept with it.
    private(set) var verification: KeyVerification?
    /// When the token was issued (the usage timer's start), and whether a request has used it.
    private var issuedAt: Date?
    private var used = false

    /// `beginUsingPinUvAuthToken(userIsPresent)`: the new token is in use, the user verified (by
    /// the PIN: `verification`), its usage timer started at `now`.
    mutating func beginUsing(userIsPresent: Bool, permissions: PinUvPermission, rpId: String?, verification: KeyVerification, at now: Date) {
        inUse = true
        userVerified = true
        userPresent = userIsPresent
        self.permissions = permissions
        permissionsRPID = rpId
        self.verification = verification
        issuedAt = now
        used = false
    }

    /// `stopUsingPinUvAuthToken()`: back to the state at power-up.
    mutating func stopUsing() { self = PinUvAuthTokenState() }

    /// `pinUvAuthTokenUsageTimerObserver()` at `now`: presence forgotten after its time limit; the
    /// token ended when unused past the initial usage time limit or past the max usage time period.
    mutating func observe(at now: Date) {
        guard inUse, let issuedAt else { return }
        let elapsed = now.timeIntervalSince(issuedAt)
        if elapsed > Self.userPresentTimeLimit { userPresent = false }
        if (!used && elapsed > Self.initialUsageTimeLimit) || elapsed > Self.maxUsageTimePeriod { stopUsing() }
    }

    /// A request used the token (its pinUvAuthParam verified).
    mutating func markUsed() { used = true }

    /// `clearUserPresentFlag()`, `clearUserVerifiedFlag()`, `clearPinUvAuthTokenPermissionsExceptLbw()`.
    mutating func clearUserPresentFlag() { if inUse { userPresent = false } }
    mutating func clearUserVerifiedFlag() { if inUse { userVerified = false } }
    mutating func clearPermissionsExceptLargeBlobWrite() { if inUse { permissions.formIntersection(.largeBlobWrite) } }
}
