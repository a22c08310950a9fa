/// One X.509 v3 extension (RFC 5280 §4.1): its OID in dotted form, whether it is critical, and the
/// DER contents of its extnValue OCTET STRING (the OCTET STRING itself is added by the builder).
public struct CertificateExtension: Sendable, Equatable {
    public var oid: String
    public var critical: Bool
    public var value: [UInt8]

    public init(oid: String, critical: Bool, value: [UInt8]) {
        self.oid = oid
        self.critical = critical
        self.value = value
    }

    public static let basicConstraintsOID = "2.5.29.19"
    public static let keyUsageOID = "2.5.29.15"
    public static let subjectKeyIdentifierOID = "2.5.29.14"
    public static let authorityKeyIdentifierOID = "2.5.29.35"
    /// id-fido-gen-ce-aaguid (WebAuthn L3 §8.2.1).
    public static let fidoAAGUIDOID = "1.3.6.1.4.1.45724.1.1.4"

    /// basicConstraints (RFC 5280 §4.2.1.9): `SEQUENCE { cA BOOLEAN DEFAULT FALSE, pathLenConstraint
    /// INTEGER OPTIONAL }`; DER leaves out a FALSE cA, so an end entity's value is an empty SEQUENCE.
    public static func basicConstraints(ca: Bool, pathLength: Int? = nil, critical: Bool = true) -> CertificateExtension {
        var members: [[UInt8]] = []
        if ca { members.append(DER.boolean(true)) }
        if ca, let pathLength { members.append(DER.integer(Int64(pathLength))) }
        return CertificateExtension(oid: basicConstraintsOID, critical: critical, value: DER.sequence(members))
    }

    /// The keyUsage bits (RFC 5280 §4.2.1.3), numbered as the standard numbers them.
    public struct KeyUsage: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static let digitalSignature = KeyUsage(rawValue: 1 << 0)
        public static let nonRepudiation = KeyUsage(rawValue: 1 << 1)
        public static let keyEncipherment = KeyUsage(rawValue: 1 << 2)
        public static let dataEncipherment = KeyUsage(rawValue: 1 << 3)
        public static let keyAgreement = KeyUsage(rawValue: 1 << 4)
        public static let keyCertSign = KeyUsage(rawValue: 1 << 5)
        public static let cRLSign = KeyUsage(rawValue: 1 << 6)
    }

    public static func keyUsage(_ usage: KeyUsage, critical: Bool = true) -> CertificateExtension {
        let bits = Set((0..<9).filter { usage.rawValue & (1 << $0) != 0 })
        return CertificateExtension(oid: keyUsageOID, critical: critical, value: DER.namedBits(bits))
    }

    /// subjectKeyIdentifier (RFC 5280 §4.2.1.2): `KeyIdentifier ::= OCTET STRING`. See
    /// ``X509Certificate/keyIdentifier(subjectPublicKeyInfo:)`` for the usual identifier.
    public static func subjectKeyIdentifier(_ keyIdentifier: [UInt8]) -> CertificateExtension {
        CertificateExtension(oid: subjectKeyIdentifierOID, critical: false, value: DER.octetString(keyIdentifier))
    }

    /// authorityKeyIdentifier (RFC 5280 §4.2.1.1): `SEQUENCE { keyIdentifier [0] IMPLICIT OCTET STRING }`.
    public static func authorityKeyIdentifier(_ keyIdentifier: [UInt8]) -> CertificateExtension {
        CertificateExtension(oid: authorityKeyIdentifierOID, critical: false,
                             value: DER.sequence([DER.implicit(0, content: keyIdentifier)]))
    }

    /// id-fido-gen-ce-aaguid, non-critical: the 16-byte AAGUID as an OCTET STRING (which the
    /// certificate then wraps again as the extension's extnValue).
    public static func fidoAAGUID(_ aaguid: [UInt8]) -> CertificateExtension {
        precondition(aaguid.count == 16, "an AAGUID is 16 bytes")
        return CertificateExtension(oid: fidoAAGUIDOID, critical: false, value: DER.octetString(aaguid))
    }
}
