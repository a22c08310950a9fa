import Foundation
import Session

/// What a valid pinUvAuthParam established (``SecurityKey/authorize(_:version:message:permission:rp:)``):
/// the token's flags and RP after the request, and the proof of the PIN that earned the token.
struct PinUvAuthorization {
    /// The proof of the PIN (the biometry key its check unwrapped), which the ceremony hands the
    /// device as the person's verification (``KeyPerson/verification``).
    let verification: KeyVerification
    /// The token's userVerified flag (`getUserVerifiedFlagValue()`): the response's UV bit.
    /// Always true for makeCredential and getAssertion, which are refused without it.
    let userVerified: Bool
    /// The token's userPresent flag (`getUserPresentFlagValue()`): false for every token this key
    /// issues (no built-in user verification takes presence with it), so a command that needs
    /// presence still asks for a touch.
    let userPresent: Bool
    /// The token's permissions RP ID after this request (just bound to the request's RP ID if it
    /// had none).
    let permissionsRPID: String?
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
    /// enumerateRPs wants a token bound to none) checks ``PinUvAuthorization/permissionsRPID``.
    case any
}

extension SecurityKey {
    /// The pinUvAuthParam check every command that takes a token makes (makeCredential §6.1.2
    /// step 11.1, getAssertion §6.2.2 step 8.1, credentialManagement §6.8, largeBlobs §6.10.2,
    /// authenticatorConfig §6.11): `param` must be protocol `version`'s MAC of `message` under
    /// the current pinUvAuthToken, the token in use (not expired, not replaced by a newer one, not
    /// ended by changePIN, a reset or a power cycle), holding `permission`, bound to `rp` or to no
    /// RP, and — for makeCredential and getAssertion — with its userVerified flag still set. On
    /// success the token counts as used (its initial usage time limit no longer applies) and, for
    /// ``PinUvAuthRP/rpId(_:)``, is bound to that RP if it was bound to none.
    ///
    /// Throws CTAP1_ERR_INVALID_PARAMETER for a protocol the key does not support, and
    /// CTAP2_ERR_PIN_AUTH_INVALID for every other failure, as the commands' steps say. Called
    /// from a command, with the key's lock held; the zero-length pinUvAuthParam probe of
    /// makeCredential and getAssertion (§6.1.2 steps 1–2) is the caller's, before this. A
    /// makeCredential or getAssertion that then collects the person's touch calls
    /// ``consumePinUvAuthTokenAfterPresence()``.
    ///
    ///     let authorization = try authorize(param, version: version, message: clientDataHash,
    ///                                       permission: .makeCredential, rp: .rpId(rpId))
    func authorize(_ param: [UInt8], version number: Int, message: [UInt8], permission: PinUvPermission,
                   rp: PinUvAuthRP) throws(CTAPStatus) -> PinUvAuthorization {
        guard let version = PinUvAuthProtocol.Version(rawValue: number) else { throw .invalidParameter }
        pinState.token.observe(at: now())
        let token = pinState.token
        guard token.inUse, let verification = token.verification else { throw .pinAuthInvalid }
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
        let makesOrGets = !permission.isDisjoint(with: [.makeCredential, .getAssertion])
        guard token.userVerified || !makesOrGets else { throw .pinAuthInvalid }
        if token.permissionsRPID == nil, case .rpId(let id) = rp { pinState.token.permissionsRPID = id }
        pinState.token.markUsed()
        return PinUvAuthorization(verification: verification, userVerified: token.userVerified, userPresent: token.userPresent,
                                  permissionsRPID: pinState.token.permissionsRPID)
    }

    /// ``authorize(_:version:message:permission:rp:)`` for a request that names its RP by RP ID
    /// (`nil`: none, ``PinUvAuthRP/any``).
    func authorize(_ param: [UInt8], version: Int, message: [UInt8], permission: PinUvPermission,
                   rpId: String?) throws(CTAPStatus) -> PinUvAuthorization {
        try authorize(param, version: version, message: message, permission: permission, rp: rpId.map { .rpId($0) } ?? .any)
    }

    /// `clearUserPresentFlag()`, `clearUserVerifiedFlag()` and
    /// `clearPinUvAuthTokenPermissionsExceptLbw()` (CTAP 2.1 §6.5.5.1), which makeCredential and
    /// getAssertion call once they collected the person's presence for a request (§6.1.2 step
    /// 14, §6.2.2 step 9): the token then serves no further makeCredential or getAssertion, only
    /// a large-blob write.
    func consumePinUvAuthTokenAfterPresence() {
        pinState.token.clearUserPresentFlag()
        pinState.token.clearUserVerifiedFlag()
        pinState.token.clearPermissionsExceptLargeBlobWrite()
    }

    /// Protocol `number`'s state (its key agreement and current token), for a command that
    /// decapsulates a platform key itself (getAssertion's hmac-secret, CTAP 2.1 §12.5):
    /// CTAP1_ERR_INVALID_PARAMETER for a protocol the key does not support.
    func pinUvAuthProtocol(_ number: Int) throws(CTAPStatus) -> PinUvAuthProtocol {
        guard let version = PinUvAuthProtocol.Version(rawValue: number) else { throw .invalidParameter }
        return try pinState.protocolState(version)
    }
}
