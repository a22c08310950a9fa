@_spi(ByteOrder) import ByteOrder

/// `tpm` (WebAuthn L3 §8.3), as Windows Hello sends it: the credential key's public area
/// (`pubArea`), the TPM2_Certify result over it (`certInfo`, whose extraData is the hash of
/// authenticatorData ‖ clientDataHash), signed by the attestation identity key (AIK), whose
/// certificate (§8.3.1: empty subject, TCG subject alternative name, tcg-kp-AIKCertificate) leads
/// x5c. The AIK is the CA's batch attestation key, a P-256 key: `alg` is ES256.
package enum TPMAttestationStatement {
    package static let formatIdentifier = "tpm"
    package static let aikAlgorithm = COSEAlgorithm.es256

    package static func build(_ input: AttestationStatementInput, credentialKey: COSEKey,
                             device: TPMDeviceAttributes = .microsoft) throws(AttestationStatementError) -> CBORValue {
        let key: TPMTPublic.Key
        switch credentialKey {
        case .rsa(let n, let e):
            guard e.count <= 4 else { throw AttestationStatementError("tpm: an RSA exponent wider than 32 bits") }
            key = .rsa(modulus: n, exponent: BigEndianBytes.integer(e))
        case .ec2(let x, let y):
            key = .ecc(x: x, y: y)
        case .okp:
            throw AttestationStatementError("tpm: a TPM makes no Ed25519 keys")
        }
        let pubArea = TPMTPublic(key: key)
        guard let extraData = TPMSAttest.extraData(alg: aikAlgorithm.rawValue, authenticatorData: input.authenticatorData,
                                                   clientDataHash: input.clientDataHash) else {
            throw AttestationStatementError("tpm: no extraData hash for the AIK's algorithm")
        }
        guard case .ec2(let aikX, let aikY) = input.ca.attestationKey.publicKey else {
            throw AttestationStatementError("tpm: the AIK is not a P-256 key")
        }
        let aik = TPMTPublic(key: .ecc(x: aikX, y: aikY))
        let certInfo = TPMSAttest(
            certifying: pubArea, parentQualifiedName: TPMSAttest.ownerHierarchy,
            qualifiedSigner: TPMSCertifyInfo.qualifiedName(of: aik.name(), parentQualifiedName: TPMSAttest.ownerHierarchy),
            extraData: extraData,
            clockInfo: TPMSClockInfo(clock: 0, resetCount: 0, restartCount: 0, safe: true), firmwareVersion: 0)
        do {
            let aikCertificate = try input.ca.issueAttestationCertificate(
                subject: .empty, aaguid: nil, extensions: TPMAIKCertificate.extensions(device: device, aaguid: input.aaguid),
                validity: input.certificateValidity)
            let encoded = certInfo.encoded()
            let signature = try input.ca.attestationKey.sign(encoded)
            return TPMAttestation.statement(
                alg: aikAlgorithm.rawValue, x5c: ([aikCertificate] + input.ca.chain(above: .intermediate)).map(\.der),
                sig: signature, certInfo: encoded, pubArea: pubArea.encoded())
        } catch { throw AttestationStatementError(error) }
    }
}
