import COpenSSL

/// A credential's key pair, for one of the ``COSEAlgorithm``s: P-256 (ES256), Ed25519 (EdDSA) or
/// RSA-2048 (RS256). Owns exactly one OpenSSL `EVP_PKEY` and frees it in `deinit`; no OpenSSL
/// type escapes this file. `Sendable` because the key never changes after it is made and every
/// operation has a context of its own (built for it, or borrowed from the key's pool of signing
/// contexts): OpenSSL 3 makes a shared `EVP_PKEY` safe to sign and read from several threads.
public final class PrivateKey: @unchecked Sendable {
    public let algorithm: COSEAlgorithm
    private let pkey: OpaquePointer
    /// Signing contexts bound to this key (ES256, RS256), prepared once per concurrent signer.
    private let signing = PKeyContextPool()

    /// Whether the key was generated here as a P-256 key (named curve, uncompressed point, public
    /// key kept): its DER is then written directly (``writeP256DER(into:)``), not through OpenSSL's
    /// encoder, whose look-up of an encoder by name costs more than the key generation.
    private let generatedP256: Bool

    private init(pkey: OpaquePointer, algorithm: COSEAlgorithm, generated: Bool = false) {
        self.pkey = pkey
        self.algorithm = algorithm
        generatedP256 = generated && algorithm == .es256
    }
    deinit { EVP_PKEY_free(pkey) }

    /// The size of new RSA keys (what Windows Hello makes).
    package static let rsaBits: Int32 = 2048

    /// Key generation contexts, one pool per algorithm.
    private static let generators = (es256: PKeyContextPool(), edDSA: PKeyContextPool(), rs256: PKeyContextPool())

    /// A fresh key pair from OpenSSL's CSPRNG.
    package static func generate(_ algorithm: COSEAlgorithm = .es256) throws(OpenSSLFailure) -> PrivateKey {
        let pool = switch algorithm {
        case .es256: generators.es256
        case .edDSA: generators.edDSA
        case .rs256: generators.rs256
        }
        return try pool.withContext(prepare: { () throws(OpenSSLFailure) in try keyGenerationContext(algorithm) }) { ctx throws(OpenSSLFailure) in
            var key: OpaquePointer? = nil
            guard EVP_PKEY_keygen(ctx, &key) == 1, let key else { throw OpenSSLFailure("EVP_PKEY_keygen") }
            return PrivateKey(pkey: key, algorithm: algorithm, generated: true)
        }
    }

    /// A context ready to generate keys of `algorithm`, any number of times.
    private static func keyGenerationContext(_ algorithm: COSEAlgorithm) throws(OpenSSLFailure) -> OpaquePointer {
        let type = switch algorithm {
        case .es256: authctl_pkey_ec
        case .edDSA: authctl_pkey_ed25519
        case .rs256: authctl_pkey_rsa
        }
        guard let ctx = EVP_PKEY_CTX_new_id(type, nil) else { throw OpenSSLFailure("EVP_PKEY_CTX_new_id") }
        let ready = switch algorithm {
        case .es256: EVP_PKEY_keygen_init(ctx) == 1 && EVP_PKEY_CTX_set_ec_paramgen_curve_nid(ctx, authctl_nid_p256) == 1
        case .rs256: EVP_PKEY_keygen_init(ctx) == 1 && EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, rsaBits) == 1
        case .edDSA: EVP_PKEY_keygen_init(ctx) == 1
        }
        guard ready else {
            EVP_PKEY_CTX_free(ctx)
            throw OpenSSLFailure("\(algorithm) key generation setup")
        }
        return ctx
    }

    /// Loads a key from its DER encoding (RFC 5915 `ECPrivateKey`, PKCS #1 `RSAPrivateKey` or
    /// PKCS #8), read straight from the caller's buffer so the secret is never copied into a Swift
    /// array. Its algorithm is what the key is: P-256, Ed25519, or RSA of 2048 bits or more.
    package static func load(der: UnsafeRawBufferPointer) throws(OpenSSLFailure) -> PrivateKey {
        guard let base = der.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
            throw OpenSSLFailure("empty private key")
        }
        if let key = loadAsWritten(der) { return key }
        var cursor: UnsafePointer<UInt8>? = UnsafePointer(base)
        guard let key = d2i_AutoPrivateKey(nil, &cursor, der.count) else { throw OpenSSLFailure("d2i_AutoPrivateKey") }
        let type = EVP_PKEY_get_base_id(key), bits = EVP_PKEY_get_bits(key)
        let algorithm: COSEAlgorithm? = switch type {
        case authctl_pkey_ec where bits == 256 && isP256(key): .es256
        case authctl_pkey_ed25519: .edDSA
        case authctl_pkey_rsa where (2048...4096).contains(bits): .rs256
        default: nil
        }
        guard let algorithm, cursor == UnsafePointer(base) + der.count else {
            EVP_PKEY_free(key)
            ERR_clear_error()
            throw OpenSSLFailure("not a P-256, Ed25519 or RSA (2048 to 4096 bits) private key")
        }
        return PrivateKey(pkey: key, algorithm: algorithm)
    }

    /// A key in the exact layout ``writePrivateKeyDER(into:)`` gives a new P-256 or Ed25519 key,
    /// read without OpenSSL's decoders (`d2i_AutoPrivateKey` looks them up on every call, some
    /// 350 µs, more than a signature): a P-256 RFC 5915 `ECPrivateKey` with the named curve and
    /// the uncompressed point, or an Ed25519 PKCS #8 key. Any other layout is `nil`, for the
    /// decoders.
    private static func loadAsWritten(_ der: UnsafeRawBufferPointer) -> PrivateKey? {
        let bytes = der.bindMemory(to: UInt8.self)
        guard let base = bytes.baseAddress else { return nil }
        if der.count == 121, bytes.prefix(7).elementsEqual(p256Head), bytes[39..<57].elementsEqual(p256Middle),
           let key = authctl_p256_from_scalar(base + 7, base + 56) {
            return PrivateKey(pkey: key, algorithm: .es256)
        }
        if der.count == 48, bytes.prefix(16).elementsEqual(ed25519Head),
           let key = EVP_PKEY_new_raw_private_key(authctl_pkey_ed25519, nil, base + 16, 32) {
            return PrivateKey(pkey: key, algorithm: .edDSA)
        }
        return nil
    }

    /// `SEQUENCE { INTEGER 1, OCTET STRING (32)` — the scalar follows.
    private static let p256Head: [UInt8] = [0x30, 0x77, 0x02, 0x01, 0x01, 0x04, 0x20]
    /// After the scalar: `[0] { OID prime256v1 }, [1] { BIT STRING 04` — x and y follow.
    private static let p256Middle: [UInt8] = [0xA0, 0x0A, 0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07,
                                              0xA1, 0x44, 0x03, 0x42, 0x00, 0x04]
    /// PKCS #8 `SEQUENCE { INTEGER 0, { OID id-Ed25519 }, OCTET STRING { OCTET STRING (32)` — the key follows.
    private static let ed25519Head: [UInt8] = [0x30, 0x2E, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70,
                                               0x04, 0x22, 0x04, 0x20]

    /// Whether an EC key is on P-256 (prime256v1), not merely another 256-bit curve.
    private static func isP256(_ key: OpaquePointer) -> Bool {
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_utf8_string_param(key, authctl_param_group_name, &name, name.count, &length) == 1 else { return false }
        return String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self) == "prime256v1"
    }

    /// OpenSSL's full check of the key pair — the private key, the public key (on the curve, not
    /// the point at infinity) and that they belong together — for a key that came from outside
    /// (an imported passkey). Costs milliseconds for RSA: not for every signature.
    package func validate() throws(OpenSSLFailure) {
        guard let ctx = EVP_PKEY_CTX_new(pkey, nil) else { throw OpenSSLFailure("EVP_PKEY_CTX_new") }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_check(ctx) == 1 else { throw OpenSSLFailure("the key pair does not check out") }
        if algorithm == .es256 {
            // The coordinates must be readable (a key at infinity has none).
            guard coordinate(authctl_param_ec_x) != nil, coordinate(authctl_param_ec_y) != nil else {
                throw OpenSSLFailure("the P-256 public key has no coordinates")
            }
        }
    }

    /// A P-256 public coordinate as 32 big-endian bytes, whatever point format the key keeps.
    private func coordinate(_ name: UnsafePointer<CChar>) -> [UInt8]? {
        var bn: OpaquePointer? = nil
        guard EVP_PKEY_get_bn_param(pkey, name, &bn) == 1, let bn else { ERR_clear_error(); return nil }
        defer { BN_free(bn) }
        var out = [UInt8](repeating: 0, count: 32)
        guard BN_bn2binpad(bn, &out, 32) == 32 else { return nil }
        return out
    }

    /// The DER encoding's length, so the caller can provide a buffer it owns.
    package var privateKeyDERCount: Int { generatedP256 ? Self.p256DERCount : Int(i2d_PrivateKey(pkey, nil)) }

    /// Writes the DER-encoded private key into `buffer` (at least ``privateKeyDERCount`` bytes) and
    /// returns the number of bytes written. The secret goes only where the caller points.
    package func writePrivateKeyDER(into buffer: UnsafeMutableRawBufferPointer) throws(OpenSSLFailure) -> Int {
        guard buffer.count >= privateKeyDERCount, let base = buffer.baseAddress else {
            throw OpenSSLFailure("private key buffer too small")
        }
        if generatedP256 { return try writeP256DER(into: buffer) }
        var cursor: UnsafeMutablePointer<UInt8>? = base.assumingMemoryBound(to: UInt8.self)
        let written = i2d_PrivateKey(pkey, &cursor)
        guard written > 0 else { throw OpenSSLFailure("i2d_PrivateKey") }
        return Int(written)
    }

    /// Whether `der` is exactly one PKCS #8 `PrivateKeyInfo` (RFC 5958's asymmetric key package,
    /// as WebDriver's Add Credential takes a key), not another layout `load(der:)` also reads —
    /// an RFC 5915 `ECPrivateKey` or a PKCS #1 `RSAPrivateKey` — nor one with bytes after it.
    package static func isPKCS8(der: [UInt8]) -> Bool {
        der.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress, !buffer.isEmpty else { return false }
            var cursor: UnsafePointer<UInt8>? = base
            guard let info = d2i_PKCS8_PRIV_KEY_INFO(nil, &cursor, buffer.count) else {
                ERR_clear_error()
                return false
            }
            PKCS8_PRIV_KEY_INFO_free(info)
            return cursor == base + buffer.count
        }
    }

    /// The key as a PKCS #8 `PrivateKeyInfo` (RFC 5958), as WebDriver's Get Credentials gives
    /// private keys (WebAuthn L3 §11.3): for whoever asked for the key itself.
    package func pkcs8DER() throws(OpenSSLFailure) -> [UInt8] {
        guard let info = EVP_PKEY2PKCS8(pkey) else { throw OpenSSLFailure("EVP_PKEY2PKCS8") }
        defer { PKCS8_PRIV_KEY_INFO_free(info) }
        let length = i2d_PKCS8_PRIV_KEY_INFO(info, nil)
        guard length > 0 else { throw OpenSSLFailure("i2d_PKCS8_PRIV_KEY_INFO") }
        var out = [UInt8](repeating: 0, count: Int(length))
        let written = out.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_PKCS8_PRIV_KEY_INFO(info, &cursor)
        }
        guard written == length else { throw OpenSSLFailure("i2d_PKCS8_PRIV_KEY_INFO") }
        return out
    }

    /// The length of a P-256 `ECPrivateKey` with its curve and public key (``writeP256DER(into:)``).
    static let p256DERCount = 121

    /// The RFC 5915 `ECPrivateKey` of a generated P-256 key, byte for byte what `i2d_PrivateKey`
    /// writes for it (a test holds the two together: the vault seals these bytes, and
    /// ``deriveSecret(info:length:)`` derives from them):
    ///
    ///     30 77 | 02 01 01 | 04 20 <d, 32 bytes> | a0 0a 06 08 <prime256v1> | a1 44 03 42 00 <04 ‖ X ‖ Y>
    ///
    /// The scalar is read into `buffer` directly and its OpenSSL copy cleared.
    private func writeP256DER(into buffer: UnsafeMutableRawBufferPointer) throws(OpenSSLFailure) -> Int {
        guard buffer.count >= Self.p256DERCount, let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
            throw OpenSSLFailure("private key buffer too small")
        }
        let prefix: [UInt8] = [0x30, 0x77, 0x02, 0x01, 0x01, 0x04, 0x20]
        let curve: [UInt8] = [0xa0, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0xa1, 0x44, 0x03, 0x42, 0x00]
        var bn: OpaquePointer? = nil
        guard EVP_PKEY_get_bn_param(pkey, authctl_param_priv_key, &bn) == 1, let bn else {
            ERR_clear_error()
            throw OpenSSLFailure("the P-256 private scalar cannot be read")
        }
        defer { BN_clear_free(bn) }
        var length = 0
        let written = base.withMemoryRebound(to: UInt8.self, capacity: Self.p256DERCount) { out -> Bool in
            for (i, byte) in prefix.enumerated() { out[i] = byte }
            guard BN_bn2binpad(bn, out + prefix.count, 32) == 32 else { return false }
            for (i, byte) in curve.enumerated() { out[prefix.count + 32 + i] = byte }
            let point = out + prefix.count + 32 + curve.count
            return EVP_PKEY_get_octet_string_param(pkey, authctl_param_pub_key, point, 65, &length) == 1 && length == 65 && point[0] == 0x04
        }
        guard written else {
            OPENSSL_cleanse(base, Self.p256DERCount)
            ERR_clear_error()
            throw OpenSSLFailure("the P-256 key cannot be written as an ECPrivateKey")
        }
        return Self.p256DERCount
    }

    /// The public key as a COSE_Key, read from the key's parameters (no encoder involved).
    public var publicKey: COSEKey {
        switch algorithm {
        case .es256:
            // The encoded point, read once (each read converts the point to affine coordinates:
            // a field inversion), when it is uncompressed, as a generated key's is.
            var point = [UInt8](repeating: 0, count: 65)
            var length = 0
            if EVP_PKEY_get_octet_string_param(pkey, authctl_param_pub_key, &point, point.count, &length) == 1, length == 65,
               let key = COSEKey(uncompressedPoint: point) {
                return key
            }
            ERR_clear_error()
            // Otherwise by coordinates: a key read from DER may keep its point compressed. A key
            // at infinity (which `validate` refuses) reads as zeros.
            return .ec2(x: coordinate(authctl_param_ec_x) ?? [UInt8](repeating: 0, count: 32),
                        y: coordinate(authctl_param_ec_y) ?? [UInt8](repeating: 0, count: 32))
        case .edDSA:
            var out = [UInt8](repeating: 0, count: 32)
            var length = out.count
            let ok = EVP_PKEY_get_raw_public_key(pkey, &out, &length)
            precondition(ok == 1 && length == 32, "could not read the Ed25519 public key")
            return .okp(x: out)
        case .rs256:
            return .rsa(n: bigNumber(authctl_param_rsa_n), e: bigNumber(authctl_param_rsa_e))
        }
    }

    /// An RSA parameter as unsigned big-endian bytes without leading zeros.
    private func bigNumber(_ name: UnsafePointer<CChar>) -> [UInt8] {
        var bn: OpaquePointer? = nil
        precondition(EVP_PKEY_get_bn_param(pkey, name, &bn) == 1 && bn != nil, "could not read an RSA parameter")
        defer { BN_free(bn) }
        var out = [UInt8](repeating: 0, count: Int((BN_num_bits(bn) + 7) / 8))
        _ = BN_bn2bin(bn, &out)
        return out
    }

    /// The DER `SubjectPublicKeyInfo` (RFC 5280), as `AuthenticatorAttestationResponse.getPublicKey()`.
    package var subjectPublicKeyInfo: [UInt8] { publicKey.subjectPublicKeyInfo }

    /// A signature over `message` as WebAuthn sends it: ES256 a DER `Ecdsa-Sig-Value` over its
    /// SHA-256, EdDSA the 64-byte Ed25519 signature of the message itself, RS256 PKCS #1 v1.5
    /// over its SHA-256.
    package func sign(_ message: [UInt8]) throws(OpenSSLFailure) -> [UInt8] {
        guard algorithm != .edDSA else { return try signEd25519(message) }
        // ES256 and RS256 sign the SHA-256 of the message, with a context prepared for this key.
        let digest = SHA256.hash(message)
        // The largest signature this key makes, without asking the signer (for ECDSA that
        // encodes a dummy signature).
        var length = Int(EVP_PKEY_get_size(pkey))
        return try signing.withContext(prepare: signingContext) { ctx throws(OpenSSLFailure) in
            var signature = [UInt8](repeating: 0, count: length)
            guard EVP_PKEY_sign(ctx, &signature, &length, digest, digest.count) == 1 else { throw OpenSSLFailure("EVP_PKEY_sign") }
            signature.removeLast(signature.count - length)
            return signature
        }
    }

    /// A context that signs a SHA-256 digest with this key: ECDSA, or RSA with PKCS #1 v1.5
    /// padding (OpenSSL's default) around the digest's `DigestInfo`.
    private func signingContext() throws(OpenSSLFailure) -> OpaquePointer {
        guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, pkey, nil) else { throw OpenSSLFailure("EVP_PKEY_CTX_new_from_pkey") }
        guard EVP_PKEY_sign_init(ctx) == 1, EVP_PKEY_CTX_set_signature_md(ctx, SHA256.algorithm) == 1 else {
            EVP_PKEY_CTX_free(ctx)
            throw OpenSSLFailure("EVP_PKEY_sign_init")
        }
        return ctx
    }

    /// Ed25519 (RFC 8032) signs the message itself, in one shot.
    private func signEd25519(_ message: [UInt8]) throws(OpenSSLFailure) -> [UInt8] {
        guard let ctx = EVP_MD_CTX_new() else { throw OpenSSLFailure("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestSignInit(ctx, nil, nil, nil, pkey) == 1 else { throw OpenSSLFailure("EVP_DigestSignInit") }
        var length = 0
        guard EVP_DigestSign(ctx, nil, &length, message, message.count) == 1 else { throw OpenSSLFailure("EVP_DigestSign") }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(ctx, &signature, &length, message, message.count) == 1 else { throw OpenSSLFailure("EVP_DigestSign") }
        return Array(signature.prefix(length))
    }
}

extension PrivateKey {
    /// HKDF-SHA-256 salt for ``deriveSecret(info:length:)``.
    static let secretSalt = Array("AUTHCTL-CREDENTIAL-SECRET".utf8)

    /// A secret bound to this key: HKDF-SHA-256 over the key's DER encoding (the bytes the vault
    /// seals), salt `AUTHCTL-CREDENTIAL-SECRET`, `info` naming its use. Every device holding the
    /// passkey holds the same key, so it derives the same secret; nothing has to be stored or
    /// synced for it. The DER copy is wiped before returning.
    package func deriveSecret(info: String, length: Int = 32) throws(OpenSSLFailure) -> [UInt8] {
        var der = [UInt8](repeating: 0, count: privateKeyDERCount)
        defer { der.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) } }
        let written = try der.withUnsafeMutableBytes { buffer in
            Result { () throws(OpenSSLFailure) in try writePrivateKeyDER(into: buffer) }
        }.get()
        return try der.withUnsafeBytes { buffer in
            Result { () throws(OpenSSLFailure) in
                try HKDFSHA256.derive(ikm: UnsafeRawBufferPointer(rebasing: buffer.prefix(written)), salt: Self.secretSalt,
                                      info: Array(info.utf8), length: length)
            }
        }.get()
    }
}
