import Foundation
import Session

/// What a valid pinUvAuthParam established (``SecurityKey/verifyPinUvAuthParam(protocol:param:message:permission:rp:)``).
struct PinVerification {
    /// The token's userVerified flag (`getUserVerifiedFlagValue()`): the PIN was given, so the
    /// response's UV bit is 1. Always true for makeCredential and getAssertion, which are refused
    /// without it.
    let userVerified: Bool
    /// The token's userPresent flag (`getUserPresentFlagValue()`): false for every token this key
    /// issues (it has no built-in user verification that could take presence too), so a command
    /// that needs presence still asks for a touch.
    let userPresent: Bool
    /// The token's permissions RP ID after this request (bound to `rp` now if it had none and
    /// `rp` named an RP ID).
    let permissionsRPID: String?
    /// The proof of the PIN that earned the token: what opens a passkey sealed under biometry
    /// (made with user verification) through ``Session``.
    let verifiedPIN: VerifiedPIN
}

/// How a request names its RP to the token's permissions RP ID.
enum PinUvAuthRP {
    /// makeCredential's and getAssertion's `rp.id`: a token bound to another RP is refused; a token
    /// bound to none is bound to this one now (CTAP 2.1 §6.1.2 step 11.1.7, §6.2.2 step 8.1.5).
    case rpId(String)
    /// credentialManagement's rpIDHash: a token bound to an RP whose SHA-256 is another is
    /// refused; an unbound token stays unbound.
    case rpIdHash([UInt8])
    /// A request for no RP in particular (largeBlobs, authenticatorConfig, listing RPs): the
    /// binding is not looked at here — a command with a rule of its own (credentialManagement's
    /// enumerateRPs wants a token bound to none) checks ``PinVerification/permissionsRPID``.
    case any
}

extension SecurityKey {
    /// The pinUvAuthParam check every command that takes a token makes (makeCredential §6.1.2
    /// step 11.1, getAssertion §6.2.2 step 8.1, credentialManagement §6.8, largeBlobs §6.10.2,
    /// authenticatorConfig §6.11): `param` must be `protocol`'s MAC of `message` under the current
    /// pinUvAuthToken, the token in use (not expired, not replaced by a newer one, not reset by
    /// changePIN or a power cycle), holding `permission`, bound to `rp` or to no RP, and — for
    /// makeCredential and getAssertion — with its userVerified flag still set. On success the
    /// token counts as used (its initial usage time limit no longer applies) and, for an
    /// ``PinUvAuthRP/rpId(_:)``, is bound to that RP if it was bound to none.
    ///
    /// Throws CTAP1_ERR_INVALID_PARAMETER for a protocol the key does not support, and
    /// CTAP2_ERR_PIN_AUTH_INVALID for every other failure, as the commands' steps say. Called
    /// with the key's lock held (from a command); the zero-length pinUvAuthParam probe of
    /// makeCredential and getAssertion (§6.1.2 step 2) is the caller's, before this.
    ///
    ///     let verification = try verifyPinUvAuthParam(protocol: version, param: pinUvAuthParam, message: clientDataHash,
    ///                                                  permission: .makeCredential, rp: .rpId(rp.id))
    func verifyPinUvAuthParam(protocol number: Int, param: [UInt8], message: [UInt8], permission: PinUvAuthPermissions,
                              rp: PinUvAuthRP) throws(CTAPStatus) -> PinVerification {
        guard let version = PinUvAuthProtocol.Version(rawValue: number) else { throw .invalidParameter }
        pinState.token.observe(at: now())
        let token = pinState.token
        guard token.inUse, let verifiedPIN = token.verifiedPIN else { throw .pinAuthInvalid }
        let rules = try pinState.protocolState(version)
        guard rules.verify(key: rules.pinUvAuthToken, message, signature: param) else { throw .pinAuthInvalid }
        guard token.permissions.contains(permission) else { throw .pinAuthInvalid }
        if let bound = token.permissionsRPID {
            switch rp {
            case .rpId(let id): guard bound == id else { throw .pinAuthInvalid }
            case .rpIdHash(let hash): guard ConstantTime.equal(SHA256.hash(Array(bound.utf8)), hash) else { throw .pinAuthInvalid }
            case .any: break
            }
        }
        let mcOrGa = !permission.isDisjoint(with: [.makeCredential, .getAssertion])
        guard token.userVerified || !mcOrGa else { throw .pinAuthInvalid }
        if token.permissionsRPID == nil, case .rpId(let id) = rp { pinState.token.permissionsRPID = id }
        pinState.token.markUsed()
        return PinVerification(userVerified: token.userVerified, userPresent: token.userPresent,
                               permissionsRPID: pinState.token.permissionsRPID, verifiedPIN: verifiedPIN)
    }

    /// `clearUserPresentFlag()`, `clearUserVerifiedFlag()` and
    /// `clearPinUvAuthTokenPermissionsExceptLbw()` (CTAP 2.1 §6.5.5.1), which makeCredential and
    /// getAssertion call once user presence was collected for a request made with the token
    /// (§6.1.2 step 14, §6.2.2 step 10): the token then serves no further makeCredential or
    /// getAssertion, only a large-blob write.
    func consumePinUvAuthTokenAfterPresence() {
        pinState.token.clearUserPresentFlag()
        pinState.token.clearUserVerifiedFlag()
        pinState.token.clearPermissionsExceptLargeBlobWrite()
    }

    /// Protocol `number`'s state (its key agreement and the current token), for a command that
    /// decapsulates a platform key itself (getAssertion's hmac-secret, CTAP 2.1 §12.5):
    /// CTAP1_ERR_INVALID_PARAMETER for a protocol the key does not support.
    func pinUvAuthProtocol(_ number: Int) throws(CTAPStatus) -> PinUvAuthProtocol {
        guard let version = PinUvAuthProtocol.Version(rawValue: number) else { throw .invalidParameter }
        return try pinState.protocolState(version)
    }

    /// What authenticatorReset (§6.6) forgets of the PIN while the key keeps its power: every
    /// token stops verifying and the wrong PINs in a row are forgotten. (The PIN itself, on the
    /// device, is the reset's request to ``Session``.)
    func resetClientPIN() {
        pinState.resetPinUvAuthTokens()
        pinState.consecutiveMismatches = 0
    }
}
