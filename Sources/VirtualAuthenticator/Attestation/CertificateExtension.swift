/// One X.509 v3 extension (RFC 5280 §4.1): its OID in dotted form, whether it is critical, and the
/// DER contents of its extnValue OCTET STRING (the OCTET STRING itself is added by the builder).
package struct CertificateExtension: Sendable, Equatable {
    package var oid: String
    package var critical: Bool
    package var value: [UInt8]

    package init(oid: String, critical: Bool, value: [UInt8]) {
        self.oid = oid
        self.critical = critical
        self.value = value
    }

    package static let basicConstraintsOID = "2.5.29.19"
    package static let keyUsageOID = "2.5.29.15"
    package static let subjectKeyIdentifierOID = "2.5.29.14"
    package static let authorityKeyIdentifierOID = "2.5.29.35"
    /// id-fido-gen-ce-aaguid (WebAuthn L3 §8.2.1).
    package static let fidoAAGUIDOID = "1.3.6.1.4.1.45724.1.1.4"

    /// basicConstraints (RFC 5280 §4.2.1.9): `SEQUENCE { cA BOOLEAN DEFAULT FALSE, pathLenConstraint
    /// INTEGER OPTIONAL }`; DER leaves out a FALSE cA, so an end entity's value is an empty SEQUENCE.
    package static func basicConstraints(ca: Bool, pathLength: Int? = nil, critical: Bool = true) -> CertificateExtension {
        var members: [[UInt8]] = []
        if ca { members.append(DER.boolean(true)) }
        if ca, let pathLength { members.append(DER.integer(Int64(pathLength))) }
        return CertificateExtension(oid: basicConstraintsOID, critical: critical, value: DER.sequence(members))
    }

    /// The keyUsage bits (RFC 5280 §4.2.1.3), numbered as the standard numbers them.
    package struct KeyUsage: OptionSet, Sendable {
        package let rawValue: Int
        package init(rawValue: Int) { self.rawValue = rawValue }
        package static let digitalSignature = KeyUsage(rawValue: 1 << 0)
        package static let nonRepudiation = KeyUsage(rawValue: 1 << 1)
        package static let keyEncipherment = KeyUsage(rawValue: 1 << 2)
        package static let dataEncipherment = KeyUsage(rawValue: 1 << 3)
        package static let keyAgreement = KeyUsage(rawValue: 1 << 4)
        package static let keyCertSign = KeyUsage(rawValue: 1 << 5)
        package static let cRLSign = KeyUsage(rawValue: 1 << 6)
    }

    package static func keyUsage(_ usage: KeyUsage, critical: Bool = true) -> CertificateExtension {
        let bits = Set((0..<9).filter { usage.rawValue & (1 << $0) != 0 })
        return CertificateExtension(oid: keyUsageOID, critical: critical, value: DER.namedBits(bits))
    }

    /// subjectKeyIdentifier (RFC 5280 §4.2.1.2): `KeyIdentifier ::= OCTET STRING`. See
    /// ``X509Certificate/keyIdentifier(subjectPublicKeyInfo:)`` for the usual identifier.
    package static func subjectKeyIdentifier(_ keyIdentifier: [UInt8]) -> CertificateExtension {
        CertificateExtension(oid: subjectKeyIdentifierOID, critical: false, value: DER.octetString(keyIdentifier))
    }

    /// authorityKeyIdentifier (RFC 5280 §4.2.1.1): `SEQUENCE { keyIdentifier [0] IMPLICIT OCTET STRING }`.
    package static func authorityKeyIdentifier(_ keyIdentifier: [UInt8]) -> CertificateExtension {
        CertificateExtension(oid: authorityKeyIdentifierOID, critical: false,
                             value: DER.sequence([DER.implicit(0, content: keyIdentifier)]))
    }

    /// id-fido-gen-ce-aaguid, non-critical: the 16-byte AAGUID as an OCTET STRING (which the
    /// certificate then wraps again as the extension's extnValue).
    package static func fidoAAGUID(_ aaguid: [UInt8]) -> CertificateExtension {
        precondition(aaguid.count == 16, "an AAGUID is 16 bytes")
        return CertificateExtension(oid: fidoAAGUIDOID, critical: false, value: DER.octetString(aaguid))
    }
}
