import COpenSSL

/// A P-256 key pair for ECDH (SP 800-56A): the key-agreement key of CTAP2's PIN/UV auth
/// protocols (CTAP 2.1 §6.5.6), on either side. Owns exactly one OpenSSL `EVP_PKEY` and frees it
/// in `deinit`; no OpenSSL type escapes this file. Immutable once made, so `Sendable`.
package final class KeyAgreementKey: @unchecked Sendable {
    private let pkey: OpaquePointer
    /// The public point's coordinates, 32 big-endian bytes each.
    package let x: [UInt8]
    package let y: [UInt8]

    private init(pkey: OpaquePointer) throws(OpenSSLFailure) {
        var point = [UInt8](repeating: 0, count: 65)
        var length = 0
        guard EVP_PKEY_get_octet_string_param(pkey, authctl_param_pub_key, &point, point.count, &length) == 1,
              length == 65, point[0] == 0x04 else {
            EVP_PKEY_free(pkey)
            throw OpenSSLFailure("the P-256 public point cannot be read")
        }
        self.pkey = pkey
        x = Array(point[1...32])
        y = Array(point[33...64])
    }
    deinit { EVP_PKEY_free(pkey) }

    /// A fresh key pair from OpenSSL's CSPRNG.
    package static func generate() throws(OpenSSLFailure) -> KeyAgreementKey {
        guard let ctx = EVP_PKEY_CTX_new_id(authctl_pkey_ec, nil) else { throw OpenSSLFailure("EVP_PKEY_CTX_new_id") }
        defer { EVP_PKEY_CTX_free(ctx) }
        var key: OpaquePointer? = nil
        guard EVP_PKEY_keygen_init(ctx) == 1, EVP_PKEY_CTX_set_ec_paramgen_curve_nid(ctx, authctl_nid_p256) == 1,
              EVP_PKEY_keygen(ctx, &key) == 1, let key else { throw OpenSSLFailure("P-256 key generation") }
        return try KeyAgreementKey(pkey: key)
    }

    /// The key pair of a known private scalar and its public point (32 bytes each, big-endian):
    /// for known-answer tests, whose vectors fix both sides' keys.
    package static func known(scalar: [UInt8], x: [UInt8], y: [UInt8]) throws(OpenSSLFailure) -> KeyAgreementKey {
        guard scalar.count == 32, x.count == 32, y.count == 32 else { throw OpenSSLFailure("a P-256 scalar or coordinate is not 32 bytes") }
        let point = [0x04] + x + y
        guard let key = authctl_p256_from_scalar(scalar, point) else { throw OpenSSLFailure("EVP_PKEY_fromdata") }
        return try KeyAgreementKey(pkey: key)
    }

    /// Z, the x-coordinate of the shared point with the peer's public point (`peerX`, `peerY`):
    /// `nil` when that point is not one of P-256 (not on the curve, or not 32-byte coordinates).
    package func sharedSecret(peerX: [UInt8], peerY: [UInt8]) -> [UInt8]? {
        guard peerX.count == 32, peerY.count == 32 else { return nil }
        let point = [0x04] + peerX + peerY
        guard let peer = authctl_p256_public_from_point(point) else {
            ERR_clear_error()
            return nil
        }
        defer { EVP_PKEY_free(peer) }
        var z = [UInt8](repeating: 0, count: 32)
        guard authctl_p256_ecdh(pkey, peer, &z) == 1 else {
            ERR_clear_error()
            return nil
        }
        return z
    }
}
