import COpenSSL

/// HMAC-SHA-256 (RFC 2104) through OpenSSL.
package enum HMACSHA256 {
    package static func mac(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let result = key.withUnsafeBufferPointer { k in
            message.withUnsafeBufferPointer { m in
                HMAC(EVP_sha256(), k.baseAddress, Int32(k.count), m.baseAddress, m.count, &out, &length)
            }
        }
        precondition(result != nil && length == 32, "HMAC-SHA-256 failed")
        return out
    }
}

/// HKDF-SHA-256 (RFC 5869) through OpenSSL's EVP_KDF "HKDF".
package enum HKDFSHA256 {
    package static func derive(ikm: UnsafeRawBufferPointer, salt: [UInt8], info: [UInt8], length: Int) throws(OpenSSLFailure) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: length)
        let ok = salt.withUnsafeBufferPointer { s in
            info.withUnsafeBufferPointer { i in
                authctl_hkdf_sha256(ikm.baseAddress?.assumingMemoryBound(to: UInt8.self), ikm.count,
                                    s.baseAddress, s.count, i.baseAddress, i.count, &out, length)
            }
        }
        guard ok == 1 else { throw OpenSSLFailure("HKDF-SHA-256") }
        return out
    }

    package static func derive(ikm: [UInt8], salt: [UInt8], info: [UInt8], length: Int) throws(OpenSSLFailure) -> [UInt8] {
        try ikm.withUnsafeBytes { buffer in
            Result { () throws(OpenSSLFailure) in try derive(ikm: buffer, salt: salt, info: info, length: length) }
        }.get()
    }
}

/// AES-256-GCM (NIST SP 800-38D) with 12-byte nonces and 16-byte tags, through OpenSSL.
package enum AES256GCM {
    package static let nonceLength = 12, tagLength = 16

    /// ciphertext ‖ tag.
    package static func seal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], associatedData: [UInt8]) throws(OpenSSLFailure) -> [UInt8] {
        precondition(key.count == 32 && nonce.count == nonceLength)
        var out = [UInt8](repeating: 0, count: plaintext.count + tagLength)
        let ok = out.withUnsafeMutableBufferPointer { o in
            authctl_aes256gcm_seal(key, nonce, associatedData, associatedData.count, plaintext, plaintext.count, o.baseAddress)
        }
        guard ok == 1 else { throw OpenSSLFailure("AES-256-GCM seal") }
        return out
    }

    /// The plaintext of ciphertext ‖ tag; `nil` when the tag does not verify.
    package static func open(_ sealed: [UInt8], key: [UInt8], nonce: [UInt8], associatedData: [UInt8]) -> [UInt8]? {
        precondition(key.count == 32 && nonce.count == nonceLength)
        guard sealed.count >= tagLength else { return nil }
        var out = [UInt8](repeating: 0, count: sealed.count - tagLength)
        let ok = out.withUnsafeMutableBufferPointer { o in
            authctl_aes256gcm_open(key, nonce, associatedData, associatedData.count, sealed, sealed.count, o.baseAddress)
        }
        ERR_clear_error()
        return ok == 1 ? out : nil
    }
}

/// AES-256-CBC without padding (NIST SP 800-38A), over whole 16-byte blocks, through OpenSSL: the
/// cipher of CTAP2's PIN/UV auth protocols (CTAP 2.1 §6.5.6, §6.5.7), whose messages are always
/// whole blocks.
package enum AES256CBC {
    package static let blockLength = 16

    /// The ciphertext of `plaintext` (a multiple of 16 bytes; `nil` otherwise).
    package static func encrypt(_ plaintext: [UInt8], key: [UInt8], iv: [UInt8]) -> [UInt8]? {
        cipher(plaintext, key: key, iv: iv, encrypt: 1)
    }

    /// The plaintext of `ciphertext` (a multiple of 16 bytes; `nil` otherwise).
    package static func decrypt(_ ciphertext: [UInt8], key: [UInt8], iv: [UInt8]) -> [UInt8]? {
        cipher(ciphertext, key: key, iv: iv, encrypt: 0)
    }

    private static func cipher(_ input: [UInt8], key: [UInt8], iv: [UInt8], encrypt: Int32) -> [UInt8]? {
        precondition(key.count == 32 && iv.count == blockLength)
        guard input.count % blockLength == 0 else { return nil }
        guard !input.isEmpty else { return [] }
        var out = [UInt8](repeating: 0, count: input.count)
        let ok = out.withUnsafeMutableBufferPointer { o in authctl_aes256cbc(key, iv, input, input.count, o.baseAddress, encrypt) }
        ERR_clear_error()
        return ok == 1 ? out : nil
    }
}

/// Comparison of secrets whose time does not depend on where they differ (OpenSSL's
/// `CRYPTO_memcmp`): MACs and PIN hashes an attacker could otherwise learn byte by byte.
package enum ConstantTime {
    /// Whether `a` and `b` are the same bytes. Their lengths are public: unequal lengths are
    /// answered at once.
    package static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        guard !a.isEmpty else { return true }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in CRYPTO_memcmp(x.baseAddress, y.baseAddress, a.count) == 0 } }
    }
}
