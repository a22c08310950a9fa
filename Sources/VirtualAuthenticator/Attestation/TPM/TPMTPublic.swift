@_spi(ByteOrder) import ByteOrder

/// TPMT_PUBLIC (TPM 2.0 Library Part 2 §12.2.4): the public area of a TPM object, the `pubArea`
/// of a `tpm` attestation statement (WebAuthn L3 §8.3). Its name algorithm is SHA-256; symmetric
/// and scheme are TPM_ALG_NULL (an unrestricted key, any scheme), so each takes only its 2-byte
/// algorithm id.
///
///     type (UINT16) ‖ nameAlg (UINT16) ‖ objectAttributes (UINT32) ‖ authPolicy (TPM2B_DIGEST)
///     ‖ parameters (TPMS_RSA_PARMS | TPMS_ECC_PARMS) ‖ unique (TPM2B_PUBLIC_KEY_RSA | TPMS_ECC_POINT)
package struct TPMTPublic: Equatable, Sendable {
    /// The key: what `parameters` and `unique` hold.
    package enum Key: Equatable, Sendable {
        /// An RSA key: the unsigned big-endian modulus `n` exactly as the credential's COSE key
        /// carries it (a verifier compares the bytes), and the public exponent.
        case rsa(modulus: [UInt8], exponent: UInt32)
        /// A P-256 key: the 32-byte coordinates exactly as the credential's COSE key carries them.
        case ecc(x: [UInt8], y: [UInt8])
    }

    /// The policy digest of a Windows Hello key (TPM2_PolicyCommandCode(ObjectChangeAuth)
    /// then TPM2_PolicyAuthValue, under SHA-256), as its pubArea carries it.
    package static let windowsHelloAuthPolicy: [UInt8] = [
        0x9D, 0xFF, 0xCB, 0xF3, 0x6C, 0x38, 0x3A, 0xE6, 0x99, 0xFB, 0x98, 0x68, 0xDC, 0x6D, 0xCB, 0x89,
        0xD7, 0x15, 0x38, 0x84, 0xBE, 0x28, 0x03, 0x92, 0x2C, 0x12, 0x41, 0x58, 0xBF, 0xAD, 0x22, 0xAE,
    ]

    package let key: Key
    package let objectAttributes: TPMAObject
    /// Empty, or a SHA-256 policy digest (32 bytes).
    package let authPolicy: [UInt8]
    /// keyBits of TPMS_RSA_PARMS: the modulus size in bits (2048 for Windows Hello).
    package var rsaKeyBits: UInt16 {
        guard case .rsa(let modulus, _) = key else { return 0 }
        return UInt16(modulus.count * 8)
    }

    package init(
        key: Key,
        objectAttributes: TPMAObject = .windowsHelloCredentialKey,
        authPolicy: [UInt8] = TPMTPublic.windowsHelloAuthPolicy
    ) {
        precondition(authPolicy.isEmpty || authPolicy.count == 32, "authPolicy is empty or a SHA-256 digest")
        if case .ecc(let x, let y) = key {
            precondition(x.count == 32 && y.count == 32, "P-256 coordinates are 32 bytes each")
        }
        self.key = key
        self.objectAttributes = objectAttributes
        self.authPolicy = authPolicy
    }

    package static let nameAlg = TPMAlgorithmID.sha256

    /// The TPM's encoding, the bytes of `pubArea`.
    package func encoded() -> [UInt8] {
        var out: [UInt8] = []
        switch key {
        case .rsa: out += TPMAlgorithmID.rsa.encoded
        case .ecc: out += TPMAlgorithmID.ecc.encoded
        }
        out += Self.nameAlg.encoded
        out += BigEndianBytes.of(objectAttributes.rawValue)
        out += TPM2B.encoded(authPolicy)
        switch key {
        case .rsa(let modulus, let exponent):
            // TPMS_RSA_PARMS: symmetric, scheme, keyBits, exponent (0 stands for 2^16 + 1, and is
            // what a TPM reports for that exponent).
            out += TPMAlgorithmID.null.encoded + TPMAlgorithmID.null.encoded
            out += BigEndianBytes.of(rsaKeyBits)
            out += BigEndianBytes.of(exponent == 65537 ? 0 : exponent)
            out += TPM2B.encoded(modulus)  // TPM2B_PUBLIC_KEY_RSA
        case .ecc(let x, let y):
            // TPMS_ECC_PARMS: symmetric, scheme, curveID, kdf.
            out += TPMAlgorithmID.null.encoded + TPMAlgorithmID.null.encoded
            out += BigEndianBytes.of(TPMECCCurve.nistP256.rawValue)
            out += TPMAlgorithmID.null.encoded
            out += TPM2B.encoded(x) + TPM2B.encoded(y)  // TPMS_ECC_POINT
        }
        return out
    }

    /// The object's Name (TPM 2.0 Library Part 1 §16): nameAlg ‖ H_nameAlg(pubArea).
    package func name() -> [UInt8] {
        Self.nameAlg.encoded + SHA256.hash(encoded())
    }
}
