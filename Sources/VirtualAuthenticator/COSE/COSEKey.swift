/// A credential public key as a COSE_Key (RFC 9052 §7), as placed in attested credential data
/// (WebAuthn L3 §6.5.1.1). Encoded in CTAP2 canonical order (integer keys 1, 3, -1, -2, -3).
public enum COSEKey: Equatable, Sendable {
    /// EC2 on P-256 (RFC 9053 §7.1.1): {1: 2, 3: -7, -1: 1, -2: x, -3: y}.
    case ec2(x: [UInt8], y: [UInt8])
    /// OKP on Ed25519 (RFC 9053 §7.2): {1: 1, 3: -8, -1: 6, -2: x}.
    case okp(x: [UInt8])
    /// RSA (RFC 8230 §4): {1: 3, 3: -257, -1: n, -2: e}, both unsigned big-endian, no leading zeros.
    case rsa(n: [UInt8], e: [UInt8])

    // kty (RFC 9053 §7), crv (RFC 9053 §7.1).
    static let ktyOKP = 1, ktyEC2 = 2, ktyRSA = 3, crvP256 = 1, crvEd25519 = 6

    public var algorithm: COSEAlgorithm {
        switch self {
        case .ec2: .es256
        case .okp: .edDSA
        case .rsa: .rs256
        }
    }

    package var cbor: CBORValue {
        switch self {
        case .ec2(let x, let y):
            .map([(.int(1), .int(Self.ktyEC2)), (.int(3), .int(COSEAlgorithm.es256.rawValue)), (.int(-1), .int(Self.crvP256)),
                  (.int(-2), .bytes(x)), (.int(-3), .bytes(y))])
        case .okp(let x):
            .map([(.int(1), .int(Self.ktyOKP)), (.int(3), .int(COSEAlgorithm.edDSA.rawValue)), (.int(-1), .int(Self.crvEd25519)),
                  (.int(-2), .bytes(x))])
        case .rsa(let n, let e):
            .map([(.int(1), .int(Self.ktyRSA)), (.int(3), .int(COSEAlgorithm.rs256.rawValue)), (.int(-1), .bytes(n)), (.int(-2), .bytes(e))])
        }
    }

    /// Parses a COSE_Key of one of the supported algorithms; anything else is `nil`.
    package init?(cbor: CBORValue) {
        guard let kty = cbor[.int(1)]?.intValue, let alg = cbor[.int(3)]?.intValue else { return nil }
        switch (kty, COSEAlgorithm(rawValue: alg)) {
        case (Self.ktyEC2, .es256):
            guard cbor[.int(-1)]?.intValue == Self.crvP256, let x = cbor[.int(-2)]?.bytesValue, x.count == 32,
                let y = cbor[.int(-3)]?.bytesValue, y.count == 32 else { return nil }
            self = .ec2(x: x, y: y)
        case (Self.ktyOKP, .edDSA):
            guard cbor[.int(-1)]?.intValue == Self.crvEd25519, let x = cbor[.int(-2)]?.bytesValue, x.count == 32 else { return nil }
            self = .okp(x: x)
        case (Self.ktyRSA, .rs256):
            guard let n = cbor[.int(-1)]?.bytesValue, (256...512).contains(n.count), n.first != 0,
                let e = cbor[.int(-2)]?.bytesValue, (1...8).contains(e.count), e.first != 0 else { return nil }
            self = .rsa(n: n, e: e)
        default:
            return nil
        }
    }

    /// From an uncompressed SEC1 P-256 point (0x04 ‖ x ‖ y).
    package init?(uncompressedPoint p: [UInt8]) {
        guard p.count == 65, p[0] == 0x04 else { return nil }
        self = .ec2(x: Array(p[1...32]), y: Array(p[33...64]))
    }

    /// The DER SubjectPublicKeyInfo (RFC 5280 §4.1.2.7), as `getPublicKey()` returns it:
    /// id-ecPublicKey/prime256v1 (RFC 5480), id-Ed25519 (RFC 8410), rsaEncryption (RFC 8017).
    public var subjectPublicKeyInfo: [UInt8] {
        switch self {
        case .ec2(let x, let y):
            [0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01,
             0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00, 0x04] + x + y
        case .okp(let x):
            [0x30, 0x2A, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x03, 0x21, 0x00] + x
        case .rsa(let n, let e):
            DER.sequence([
                DER.sequence([DER.oid("1.2.840.113549.1.1.1"), DER.null]),
                DER.bitString(DER.sequence([DER.unsignedInteger(n), DER.unsignedInteger(e)])),
            ])
        }
    }

    /// How a credential record keeps the key: an ES256 key as its uncompressed point (the form
    /// records had before other algorithms), any other as its COSE_Key encoding.
    package var storedForm: [UInt8] {
        if case .ec2(let x, let y) = self { return [0x04] + x + y }
        return cbor.encoded()
    }

    /// The key from its ``storedForm``, given the record's algorithm.
    package init?(storedForm bytes: [UInt8], algorithm: COSEAlgorithm) {
        if algorithm == .es256 {
            self.init(uncompressedPoint: bytes)
            return
        }
        guard let cbor = try? CBORValue.decode(bytes), let key = COSEKey(cbor: cbor), key.algorithm == algorithm else { return nil }
        self = key
    }
}
