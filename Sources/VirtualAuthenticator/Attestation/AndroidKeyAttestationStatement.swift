/// `android-key` (WebAuthn L3 §8.4): the CREDENTIAL key signs authenticatorData ‖ clientDataHash;
/// its certificate carries a ``KeyDescription`` whose attestationChallenge is clientDataHash and
/// whose teeEnforced list says the key was generated inside (origin 0) for signing (purpose 2).
/// The statement is {alg, sig, x5c: [credCert, intermediate, root]}.
///
/// The root is included as Android's own chains include theirs: py_webauthn reads the last x5c
/// entry as the root and requires it to be one of the roots it trusts.
package enum AndroidKeyAttestationStatement {
    /// The attestation statement format identifier (WebAuthn L3 §8).
    package static let formatIdentifier = "android-key"

    package static func build(_ input: AttestationStatementInput) throws(AttestationStatementError) -> CBORValue {
        guard [COSEAlgorithm.es256.rawValue, -8, -257].contains(input.credentialAlgorithm) else {
            throw AttestationStatementError("android-key: unsupported COSE algorithm \(input.credentialAlgorithm)")
        }
        let description = KeyDescription(
            attestationChallenge: input.clientDataHash,
            teeEnforced: .generatedSigningKey(coseAlgorithm: input.credentialAlgorithm))
        do {
            let certificate = try input.ca.issueCertificate(
                subject: input.certificateSubject, subjectPublicKeyInfo: input.credentialPublicKey,
                extensions: [description.certificateExtension], validity: input.certificateValidity)
            let signature = try input.signWithCredentialKey(input.authenticatorData + input.clientDataHash)
            let chain = [certificate] + input.ca.chain(above: .intermediate) + [input.ca.root]
            return .map([
                (.text("alg"), .int(input.credentialAlgorithm)),
                (.text("sig"), .bytes(signature)),
                (.text("x5c"), .array(chain.map { .bytes($0.der) })),
            ])
        } catch { throw AttestationStatementError(error) }
    }
}
