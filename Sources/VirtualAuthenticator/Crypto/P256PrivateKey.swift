import COpenSSL

/// An ECDSA P-256 key pair (the key behind COSE algorithm ES256). Owns exactly one OpenSSL
/// `EVP_PKEY` and frees it in `deinit`; no OpenSSL type escapes this file. `Sendable` because the
/// key never changes after it is made and every operation builds its own context: OpenSSL 3 makes
/// a shared `EVP_PKEY` safe to sign and read from several threads.
public final class P256PrivateKey: @unchecked Sendable {
    private let pkey: OpaquePointer

    private init(pkey: OpaquePointer) { self.pkey = pkey }
    deinit { EVP_PKEY_free(pkey) }

    /// A fresh key pair from OpenSSL's CSPRNG.
    public static func generate() throws(OpenSSLFailure) -> P256PrivateKey {
        guard let ctx = EVP_PKEY_CTX_new_id(authctl_pkey_ec, nil) else { throw OpenSSLFailure("EVP_PKEY_CTX_new_id") }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_keygen_init(ctx) == 1,
            EVP_PKEY_CTX_set_ec_paramgen_curve_nid(ctx, authctl_nid_p256) == 1
        else { throw OpenSSLFailure("P-256 keygen setup") }
        var key: OpaquePointer? = nil
        guard EVP_PKEY_keygen(ctx, &key) == 1, let key else { throw OpenSSLFailure("EVP_PKEY_keygen") }
        return P256PrivateKey(pkey: key)
    }

    /// Loads a key from its DER encoding (RFC 5915 `ECPrivateKey` or PKCS #8), read straight from
    /// the caller's buffer so the secret is never copied into a Swift array.
    public static func load(der: UnsafeRawBufferPointer) throws(OpenSSLFailure) -> P256PrivateKey {
        guard let base = der.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
            throw OpenSSLFailure("empty private key")
        }
        var cursor: UnsafePointer<UInt8>? = UnsafePointer(base)
        guard let key = d2i_AutoPrivateKey(nil, &cursor, der.count) else { throw OpenSSLFailure("d2i_AutoPrivateKey") }
        let result = P256PrivateKey(pkey: key)
        guard EVP_PKEY_get_base_id(key) == authctl_pkey_ec, EVP_PKEY_get_bits(key) == 256,
            cursor == UnsafePointer(base) + der.count
        else { throw OpenSSLFailure("not a P-256 private key") }
        return result
    }

    /// The DER encoding's length, so the caller can provide a buffer it owns.
    public var privateKeyDERCount: Int { Int(i2d_PrivateKey(pkey, nil)) }

    /// Writes the DER-encoded private key into `buffer` (at least ``privateKeyDERCount`` bytes) and
    /// returns the number of bytes written. The secret goes only where the caller points.
    public func writePrivateKeyDER(into buffer: UnsafeMutableRawBufferPointer) throws(OpenSSLFailure) -> Int {
        guard buffer.count >= privateKeyDERCount, let base = buffer.baseAddress else {
            throw OpenSSLFailure("private key buffer too small")
        }
        var cursor: UnsafeMutablePointer<UInt8>? = base.assumingMemoryBound(to: UInt8.self)
        let written = i2d_PrivateKey(pkey, &cursor)
        guard written > 0 else { throw OpenSSLFailure("i2d_PrivateKey") }
        return Int(written)
    }

    /// The public point, uncompressed: 0x04 ‖ x (32 bytes) ‖ y (32 bytes).
    public var publicPoint: [UInt8] {
        var out = [UInt8](repeating: 0, count: 65)
        var length = 0
        let ok = EVP_PKEY_get_octet_string_param(pkey, authctl_param_pub_key, &out, out.count, &length)
        precondition(ok == 1 && length == 65 && out[0] == 0x04, "could not read the P-256 public point")
        return out
    }

    /// The DER `SubjectPublicKeyInfo` (RFC 5280), as `AuthenticatorAttestationResponse.getPublicKey()`.
    public var subjectPublicKeyInfo: [UInt8] {
        let length = i2d_PUBKEY(pkey, nil)
        precondition(length > 0, "i2d_PUBKEY failed")
        var out = [UInt8](repeating: 0, count: Int(length))
        out.withUnsafeMutableBufferPointer { buffer in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            _ = i2d_PUBKEY(pkey, &cursor)
        }
        return out
    }

    /// ECDSA with SHA-256 over `message`; the signature is DER `Ecdsa-Sig-Value`, as WebAuthn sends it.
    public func sign(_ message: [UInt8]) throws(OpenSSLFailure) -> [UInt8] {
        guard let ctx = EVP_MD_CTX_new() else { throw OpenSSLFailure("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestSignInit(ctx, nil, EVP_sha256(), nil, pkey) == 1 else { throw OpenSSLFailure("EVP_DigestSignInit") }
        var length = 0
        guard EVP_DigestSign(ctx, nil, &length, message, message.count) == 1 else { throw OpenSSLFailure("EVP_DigestSign") }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(ctx, &signature, &length, message, message.count) == 1 else { throw OpenSSLFailure("EVP_DigestSign") }
        return Array(signature.prefix(length))
    }
}
