/// The attestation object (WebAuthn L3 §6.5.4): a CBOR map {"fmt", "attStmt", "authData"}.
public struct AttestationObject: Sendable {
    public let format: AttestationFormat
    public let statement: CBORValue
    public let authenticatorData: [UInt8]

    public var bytes: [UInt8] {
        CBORValue.map([
            (.text("fmt"), .text(format.rawValue)),
            (.text("attStmt"), statement),
            (.text("authData"), .bytes(authenticatorData)),
        ]).encoded()
    }
}

/// The attestation statement formats this authenticator can produce (WebAuthn L3 §8).
public enum AttestationFormat: String, Sendable {
    case none
    case packed
}

/// What the RP asked for (`AttestationConveyancePreference`, WebAuthn L3 §5.4.7).
public enum AttestationConveyance: String, Sendable {
    case none, indirect, direct, enterprise

    /// The format this authenticator answers a preference with: self attestation in `packed`
    /// whenever the RP asks for any attestation at all.
    public var format: AttestationFormat { self == .none ? .none : .packed }
}

extension AttestationObject {
    /// `none` (WebAuthn L3 §8.7): an empty statement.
    static func none(authenticatorData: [UInt8]) -> AttestationObject {
        AttestationObject(format: .none, statement: .map([]), authenticatorData: authenticatorData)
    }

    /// `packed` self attestation (WebAuthn L3 §8.2, "If self attestation is in use"): the credential
    /// key signs authenticatorData ‖ clientDataHash; the statement is {alg: -7, sig}, no x5c.
    static func packedSelf(
        authenticatorData: [UInt8], clientDataHash: [UInt8], key: P256PrivateKey
    ) throws(OpenSSLFailure) -> AttestationObject {
        let signature = try key.sign(authenticatorData + clientDataHash)
        return AttestationObject(
            format: .packed,
            statement: .map([(.text("alg"), .int(COSEKey.es256)), (.text("sig"), .bytes(signature))]),
            authenticatorData: authenticatorData)
    }
}
