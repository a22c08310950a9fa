/// `packed` with an attestation certificate (WebAuthn L3 §8.2, "basic" attestation): the batch
/// attestation key signs authenticatorData ‖ clientDataHash; the statement is
/// {alg: -7, sig, x5c: [attestation certificate, intermediate]}.
package enum PackedAttestationStatement {
    /// The attestation statement format identifier (WebAuthn L3 §8).
    package static let formatIdentifier = "packed"

    package static func build(_ input: AttestationStatementInput) throws(AttestationStatementError) -> CBORValue {
        // §8.2.1: the certificate's AAGUID extension must match the one in authenticatorData.
        let data = input.authenticatorData
        guard data.count >= 53, data[32] & 0x40 != 0 else {
            throw AttestationStatementError("packed: authenticatorData has no attested credential data")
        }
        guard Array(data[37..<53]) == input.aaguid else {
            throw AttestationStatementError("packed: the AAGUID differs from the one in authenticatorData")
        }
        do {
            let certificate = try input.ca.issueAttestationCertificate(
                subject: input.certificateSubject, aaguid: input.aaguid, validity: input.certificateValidity)
            let signature = try input.ca.attestationKey.sign(data + input.clientDataHash)
            return .map([
                (.text("alg"), .int(COSEAlgorithm.es256.rawValue)),
                (.text("sig"), .bytes(signature)),
                (.text("x5c"), .array(([certificate] + input.ca.chain(above: .intermediate)).map { .bytes($0.der) })),
            ])
        } catch { throw AttestationStatementError(error) }
    }
}
