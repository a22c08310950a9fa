/// The attestation object (WebAuthn L3 §6.5.4): a CBOR map {"fmt", "attStmt", "authData"}.
public struct AttestationObject: Sendable {
    public let format: AttestationFormat
    package let statement: CBORValue
    public let authenticatorData: [UInt8]
    /// Set only by ``withFault(_:)``: what is done to the encoded bytes.
    var fault: Fault? = nil

    public var bytes: [UInt8] {
        var encoded = CBORValue.map([
            (.text("fmt"), .text(format.rawValue)),
            (.text("attStmt"), statement),
            (.text("authData"), .bytes(authenticatorData)),
        ]).encoded()
        fault?.apply(toAttestationObject: &encoded)
        return encoded
    }

    /// This attestation object with `fault` applied to what was signed or to its encoding.
    func withFault(_ fault: Fault) -> AttestationObject {
        var statement = statement
        var data = authenticatorData
        if case .map(var pairs) = statement, let i = pairs.firstIndex(where: { $0.0 == .text("sig") }),
           var signature = pairs[i].1.bytesValue {
            fault.apply(toSignature: &signature, authenticatorData: &data)
            pairs[i].1 = .bytes(signature)
            statement = .map(pairs)
        }
        return AttestationObject(format: format, statement: statement, authenticatorData: data, fault: fault)
    }
}

extension AttestationObject {
    /// `none` (WebAuthn L3 §8.7): an empty statement.
    static func none(authenticatorData: [UInt8]) -> AttestationObject {
        AttestationObject(format: .none, statement: .map([]), authenticatorData: authenticatorData)
    }

    /// `packed` self attestation (WebAuthn L3 §8.2, "If self attestation is in use"): the credential
    /// key signs authenticatorData ‖ clientDataHash; the statement is {alg, sig}, no x5c.
    static func packedSelf(
        authenticatorData: [UInt8], clientDataHash: [UInt8], key: PrivateKey
    ) throws(OpenSSLFailure) -> AttestationObject {
        let signature = try key.sign(authenticatorData + clientDataHash)
        return AttestationObject(
            format: .packed,
            statement: .map([(.text("alg"), .int(key.algorithm.rawValue)), (.text("sig"), .bytes(signature))]),
            authenticatorData: authenticatorData)
    }
}
