/// What every attestation statement builder starts from (WebAuthn L3 §6.5.5 "Generating an
/// Attestation Object": authenticatorData and clientDataHash, plus the credential and the CA).
package struct AttestationStatementInput {
    package var authenticatorData: [UInt8]
    package var clientDataHash: [UInt8]
    /// The credential's COSE algorithm: -7 (ES256), -8 (EdDSA), -257 (RS256).
    package var credentialAlgorithm: Int
    /// The credential public key as a DER SubjectPublicKeyInfo.
    package var credentialPublicKey: [UInt8]
    /// Signs a message with the credential private key, in `credentialAlgorithm`.
    package var signWithCredentialKey: ([UInt8]) throws(OpenSSLFailure) -> [UInt8]
    package var aaguid: [UInt8]
    package var ca: AttestationCA
    /// The subject of the leaf certificate. packed needs C, O, OU="Authenticator Attestation" and
    /// CN (``DistinguishedName/authenticatorAttestation(country:organization:commonName:)``).
    package var certificateSubject: DistinguishedName
    package var certificateValidity: CertificateValidity

    package init(authenticatorData: [UInt8], clientDataHash: [UInt8], credentialAlgorithm: Int,
                credentialPublicKey: [UInt8], signWithCredentialKey: @escaping ([UInt8]) throws(OpenSSLFailure) -> [UInt8],
                aaguid: [UInt8], ca: AttestationCA, certificateSubject: DistinguishedName,
                certificateValidity: CertificateValidity) {
        self.authenticatorData = authenticatorData
        self.clientDataHash = clientDataHash
        self.credentialAlgorithm = credentialAlgorithm
        self.credentialPublicKey = credentialPublicKey
        self.signWithCredentialKey = signWithCredentialKey
        self.aaguid = aaguid
        self.ca = ca
        self.certificateSubject = certificateSubject
        self.certificateValidity = certificateValidity
    }
}
