/// `fido-u2f` (WebAuthn L3 §8.6), ES256 credentials only. The batch attestation key signs
/// 0x00 ‖ rpIdHash ‖ clientDataHash ‖ credentialId ‖ publicKeyU2F (0x04 ‖ x ‖ y), all read from
/// authenticatorData; the statement is {sig, x5c: [attestation certificate]}.
///
/// x5c holds exactly one certificate, so the root signs it directly: a verifier that trusts the
/// root has nothing else to chain it with. U2F authenticators report an all-zero AAGUID and
/// py_webauthn rejects any other in fido-u2f: the caller should put zeros in authenticatorData.
package enum FIDOU2FAttestationStatement {
    /// The attestation statement format identifier (WebAuthn L3 §8).
    package static let formatIdentifier = "fido-u2f"

    package static func build(_ input: AttestationStatementInput) throws(AttestationStatementError) -> CBORValue {
        guard input.credentialAlgorithm == COSEAlgorithm.es256.rawValue else {
            throw AttestationStatementError("fido-u2f: only ES256 (-7) credentials, not \(input.credentialAlgorithm)")
        }
        let parsed: AuthenticatorData
        do { parsed = try AuthenticatorData(parsing: input.authenticatorData) }
        catch { throw AttestationStatementError("fido-u2f: \(error.description)") }
        guard let credential = parsed.attestedCredentialData else {
            throw AttestationStatementError("fido-u2f: authenticatorData has no attested credential data")
        }
        guard case .ec2 = credential.publicKey else { throw AttestationStatementError("fido-u2f: the credential key is not P-256") }
        let publicKeyU2F = credential.publicKey.storedForm  // 0x04 ‖ x ‖ y
        let signed = [0x00] + parsed.rpIdHash + input.clientDataHash + credential.credentialId + publicKeyU2F
        do {
            let certificate = try input.ca.issueAttestationCertificate(
                subject: input.certificateSubject, aaguid: nil, validity: input.certificateValidity, issuer: .root)
            let signature = try input.ca.attestationKey.sign(signed)
            return .map([
                (.text("sig"), .bytes(signature)),
                (.text("x5c"), .array([.bytes(certificate.der)])),
            ])
        } catch { throw AttestationStatementError(error) }
    }
}
