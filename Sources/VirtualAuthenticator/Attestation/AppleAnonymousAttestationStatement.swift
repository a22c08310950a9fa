/// `apple` (Apple Anonymous, WebAuthn L3 §8.8): a credential certificate whose subject public key
/// is the credential public key and whose extension 1.2.840.113635.100.8.2 holds
/// `SEQUENCE { [1] EXPLICIT OCTET STRING nonce }`, nonce = SHA-256(authenticatorData ‖
/// clientDataHash). The statement is {x5c: [credCert, intermediate]}; there is no signature.
package enum AppleAnonymousAttestationStatement {
    package static let nonceExtensionOID = "1.2.840.113635.100.8.2"

    /// The extension's extnValue contents: 30 24 A1 22 04 20 ‖ nonce (verifiers skip those 6 bytes).
    package static func nonceExtension(authenticatorData: [UInt8], clientDataHash: [UInt8]) -> CertificateExtension {
        let nonce = SHA256.hash(authenticatorData + clientDataHash)
        return CertificateExtension(oid: nonceExtensionOID, critical: false,
                                    value: DER.sequence([DER.explicit(1, DER.octetString(nonce))]))
    }

    /// The attestation statement format identifier (WebAuthn L3 §8).
    package static let formatIdentifier = "apple"

    package static func build(_ input: AttestationStatementInput) throws(AttestationStatementError) -> CBORValue {
        do {
            let certificate = try input.ca.issueCertificate(
                subject: input.certificateSubject, subjectPublicKeyInfo: input.credentialPublicKey,
                extensions: [nonceExtension(authenticatorData: input.authenticatorData, clientDataHash: input.clientDataHash)],
                validity: input.certificateValidity)
            return .map([
                (.text("x5c"), .array(([certificate] + input.ca.chain(above: .intermediate)).map { .bytes($0.der) })),
            ])
        } catch { throw AttestationStatementError(error) }
    }
}
