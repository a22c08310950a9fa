/// Android's key attestation record (the extension 1.3.6.1.4.1.11129.2.1.17 of an android-key
/// credential certificate; source.android.com "Key and ID attestation", schema):
///
///     KeyDescription ::= SEQUENCE {
///         attestationVersion INTEGER, attestationSecurityLevel SecurityLevel (ENUMERATED),
///         keymasterVersion INTEGER, keymasterSecurityLevel SecurityLevel,
///         attestationChallenge OCTET STRING, uniqueId OCTET STRING,
///         softwareEnforced AuthorizationList, teeEnforced AuthorizationList }
package struct KeyDescription: Sendable, Equatable {
    package static let extensionOID = "1.3.6.1.4.1.11129.2.1.17"

    package enum SecurityLevel: Int64, Sendable { case software = 0, trustedEnvironment = 1, strongBox = 2 }

    /// The tagged fields of an AuthorizationList that authctl sets, each `[tag] EXPLICIT`, in
    /// ascending tag order as the schema lists them. `allApplications` ([600]) is never set: a
    /// WebAuthn credential is scoped to its RP ID (WebAuthn L3 §8.4.1).
    package struct AuthorizationList: Sendable, Equatable {
        package var purpose: [Int64]?  // [1] SET OF INTEGER; KM_PURPOSE_SIGN = 2
        package var algorithm: Int64?  // [2]; KM_ALGORITHM_RSA = 1, KM_ALGORITHM_EC = 3
        package var keySize: Int64?  // [3]
        package var digest: [Int64]?  // [5] SET OF INTEGER; NONE = 0, SHA_2_256 = 4
        package var padding: [Int64]?  // [6] SET OF INTEGER; RSA_PKCS1_1_5_SIGN = 5
        package var ecCurve: Int64?  // [10]; P_256 = 1, CURVE_25519 = 4
        package var creationDateTime: Int64?  // [701], milliseconds since the epoch
        package var origin: Int64?  // [702]; KM_ORIGIN_GENERATED = 0

        package init(purpose: [Int64]? = nil, algorithm: Int64? = nil, keySize: Int64? = nil, digest: [Int64]? = nil,
                    padding: [Int64]? = nil, ecCurve: Int64? = nil, creationDateTime: Int64? = nil, origin: Int64? = nil) {
            self.purpose = purpose
            self.algorithm = algorithm
            self.keySize = keySize
            self.digest = digest
            self.padding = padding
            self.ecCurve = ecCurve
            self.creationDateTime = creationDateTime
            self.origin = origin
        }

        package var der: [UInt8] {
            var members: [[UInt8]] = []
            func integers(_ tag: UInt64, _ values: [Int64]?) {
                if let values { members.append(DER.explicit(tag, DER.set(values.map { DER.integer($0) }))) }
            }
            func integer(_ tag: UInt64, _ value: Int64?) {
                if let value { members.append(DER.explicit(tag, DER.integer(value))) }
            }
            integers(1, purpose)
            integer(2, algorithm)
            integer(3, keySize)
            integers(5, digest)
            integers(6, padding)
            integer(10, ecCurve)
            integer(701, creationDateTime)
            integer(702, origin)
            return DER.sequence(members)
        }

        /// A key generated inside the secure environment for signing only, described for its
        /// COSE algorithm (-7 ES256, -8 EdDSA, -257 RS256 with a 2048-bit modulus).
        package static func generatedSigningKey(coseAlgorithm: Int) -> AuthorizationList {
            var list = AuthorizationList(purpose: [2], origin: 0)
            switch coseAlgorithm {
            case -8: (list.algorithm, list.keySize, list.ecCurve, list.digest) = (3, 256, 4, [0])
            case -257: (list.algorithm, list.keySize, list.digest, list.padding) = (1, 2048, [4], [5])
            default: (list.algorithm, list.keySize, list.ecCurve, list.digest) = (3, 256, 1, [4])
            }
            return list
        }
    }

    package var attestationVersion: Int64
    package var attestationSecurityLevel: SecurityLevel
    package var keymasterVersion: Int64
    package var keymasterSecurityLevel: SecurityLevel
    package var attestationChallenge: [UInt8]
    package var uniqueId: [UInt8]
    package var softwareEnforced: AuthorizationList
    package var teeEnforced: AuthorizationList

    /// Keymaster 4 (attestation version 3) in a trusted environment, as most Android devices with
    /// a TEE report it.
    package init(attestationChallenge: [UInt8], softwareEnforced: AuthorizationList = AuthorizationList(),
                teeEnforced: AuthorizationList, attestationVersion: Int64 = 3, keymasterVersion: Int64 = 4,
                securityLevel: SecurityLevel = .trustedEnvironment, uniqueId: [UInt8] = []) {
        self.attestationVersion = attestationVersion
        self.attestationSecurityLevel = securityLevel
        self.keymasterVersion = keymasterVersion
        self.keymasterSecurityLevel = securityLevel
        self.attestationChallenge = attestationChallenge
        self.uniqueId = uniqueId
        self.softwareEnforced = softwareEnforced
        self.teeEnforced = teeEnforced
    }

    package var der: [UInt8] {
        DER.sequence([
            DER.integer(attestationVersion), DER.enumerated(attestationSecurityLevel.rawValue),
            DER.integer(keymasterVersion), DER.enumerated(keymasterSecurityLevel.rawValue),
            DER.octetString(attestationChallenge), DER.octetString(uniqueId),
            softwareEnforced.der, teeEnforced.der,
        ])
    }

    package var certificateExtension: CertificateExtension {
        CertificateExtension(oid: Self.extensionOID, critical: false, value: der)
    }
}
