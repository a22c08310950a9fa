/// What an AIK certificate, the first certificate of a `tpm` statement's x5c, must be (WebAuthn L3
/// §8.3.1 "TPM Attestation Statement Certificate Requirements"): version 3, an empty subject, and
/// the extensions below. The certificate itself (issuer, validity, the AIK's public key, the CA's
/// signature) is the certificate builder's.
package enum TPMAIKCertificate {
    /// The subject: an empty Name (an RDNSequence of no RDNs).
    package static let subject: [UInt8] = DER.sequence([])

    /// tcg-kp-AIKCertificate (TCG EK Credential Profile §3.2.16).
    package static let aikCertificateKeyPurpose = "2.23.133.8.3"
    /// id-fido-gen-ce-aaguid (WebAuthn L3 §8.2.1).
    package static let aaguidOID = "1.3.6.1.4.1.45724.1.1.4"
    package static let subjectAlternativeNameOID = "2.5.29.17"
    package static let extendedKeyUsageOID = "2.5.29.37"
    package static let basicConstraintsOID = "2.5.29.19"

    /// The extensions, in this order: subjectAltName (critical, since the subject is empty: RFC
    /// 5280 §4.2.1.6) naming the TPM as a directoryName; extKeyUsage holding only
    /// tcg-kp-AIKCertificate (a verifier reads the first purpose); basicConstraints CA:FALSE
    /// (critical); and, when given, the AAGUID (not critical).
    package static func extensions(device: TPMDeviceAttributes, aaguid: [UInt8]?) -> [CertificateExtension] {
        var extensions = [
            subjectAlternativeName(device),
            CertificateExtension(
                oid: extendedKeyUsageOID, critical: false,
                value: DER.sequence([DER.oid(aikCertificateKeyPurpose)])),
            // BasicConstraints ::= SEQUENCE { cA BOOLEAN DEFAULT FALSE, ... }: DER leaves the
            // default out.
            CertificateExtension(oid: basicConstraintsOID, critical: true, value: DER.sequence([])),
        ]
        if let aaguid {
            precondition(aaguid.count == 16, "an AAGUID is 16 bytes")
            extensions.append(CertificateExtension(oid: aaguidOID, critical: false, value: DER.octetString(aaguid)))
        }
        return extensions
    }

    /// GeneralNames holding one directoryName ([4], explicit: Name is a CHOICE).
    package static func subjectAlternativeName(_ device: TPMDeviceAttributes) -> CertificateExtension {
        CertificateExtension(
            oid: subjectAlternativeNameOID, critical: true,
            value: DER.sequence([DER.explicit(4, device.directoryName())]))
    }
}
