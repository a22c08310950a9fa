import COpenSSL

/// Verifies a WebAuthn signature (ES256, EdDSA or RS256, as ``PrivateKey/sign(_:)`` makes them)
/// against a DER SubjectPublicKeyInfo. Used by tests and by the CLI's self-check, never to decide
/// what the authenticator does.
package enum SignatureVerifier {
    package static func verify(signature: [UInt8], message: [UInt8], spki: [UInt8]) -> Bool {
        var cursor: UnsafePointer<UInt8>? = nil
        let key: OpaquePointer? = spki.withUnsafeBufferPointer { buffer in
            cursor = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let key else { ERR_clear_error(); return false }
        defer { EVP_PKEY_free(key) }
        guard let ctx = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(ctx) }
        let digest = EVP_PKEY_get_base_id(key) == authctl_pkey_ed25519 ? nil : EVP_sha256()
        guard EVP_DigestVerifyInit(ctx, nil, digest, nil, key) == 1 else { ERR_clear_error(); return false }
        let ok = EVP_DigestVerify(ctx, signature, signature.count, message, message.count) == 1
        ERR_clear_error()
        return ok
    }
}
