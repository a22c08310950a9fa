import COpenSSL

/// Whether OpenSSL can provide what authctl uses — SHA-256, random bytes, P-256 key generation —
/// asked once per process. They fail only when OpenSSL is configured without a working provider
/// (an `OPENSSL_CONF` that loads none, or only the null provider); the operations themselves treat
/// a failure as impossible, so a program asks here first (the command line and `Keychain` do) and
/// reports a named error rather than stopping on a precondition.
package enum CryptoAvailability {
    /// `nil`, or the first of them that failed.
    static let failure: OpenSSLFailure? = {
        guard let md = EVP_MD_fetch(nil, "SHA256", nil) else { return OpenSSLFailure("EVP_MD_fetch(SHA256)") }
        EVP_MD_free(md)
        var byte: UInt8 = 0
        guard RAND_bytes(&byte, 1) == 1 else { return OpenSSLFailure("RAND_bytes") }
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { return OpenSSLFailure("EVP_PKEY_CTX_new_from_name(EC)") }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_keygen_init(ctx) == 1 else { return OpenSSLFailure("EVP_PKEY_keygen_init(EC)") }
        return nil
    }()

    /// Throws what failed when OpenSSL cannot provide what authctl uses.
    package static func check() throws(OpenSSLFailure) {
        if let failure { throw failure }
    }
}
