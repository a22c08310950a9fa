/// A COSE_Key (RFC 9052 §7, RFC 9053 §7.1.1) for an EC2 P-256 public key, as placed in attested
/// credential data (WebAuthn L3 §6.5.1.1 "Examples of credentialPublicKey Values").
public struct COSEKey: Equatable, Sendable {
    public static let es256: Int = -7  // COSE algorithm ECDSA w/ SHA-256

    public let x: [UInt8]
    public let y: [UInt8]

    public init(x: [UInt8], y: [UInt8]) {
        precondition(x.count == 32 && y.count == 32, "P-256 coordinates are 32 bytes")
        self.x = x
        self.y = y
    }

    /// From an uncompressed SEC1 point (0x04 ‖ x ‖ y).
    public init?(uncompressedPoint p: [UInt8]) {
        guard p.count == 65, p[0] == 0x04 else { return nil }
        self.init(x: Array(p[1...32]), y: Array(p[33...64]))
    }

    /// The map {1: 2 (kty EC2), 3: -7 (alg ES256), -1: 1 (crv P-256), -2: x, -3: y}.
    public var cbor: CBORValue {
        .map([
            (.int(1), .int(2)),
            (.int(3), .int(COSEKey.es256)),
            (.int(-1), .int(1)),
            (.int(-2), .bytes(x)),
            (.int(-3), .bytes(y)),
        ])
    }

    /// Parses an ES256 EC2 COSE_Key; anything else is `nil`.
    public init?(cbor: CBORValue) {
        guard cbor[.int(1)]?.intValue == 2, cbor[.int(3)]?.intValue == COSEKey.es256,
            cbor[.int(-1)]?.intValue == 1, let x = cbor[.int(-2)]?.bytesValue, x.count == 32,
            let y = cbor[.int(-3)]?.bytesValue, y.count == 32
        else { return nil }
        self.init(x: x, y: y)
    }
}

extension COSEKey {
    /// The DER SubjectPublicKeyInfo (RFC 5480) of this P-256 key: the fixed id-ecPublicKey /
    /// prime256v1 AlgorithmIdentifier followed by the uncompressed point as a BIT STRING.
    public var subjectPublicKeyInfo: [UInt8] {
        [0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01,
         0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00, 0x04] + x + y
    }
}
