import CSodium

/// The libsodium primitives the vault uses, behind one wall. Nothing outside this module sees a
/// libsodium call.
enum Sodium {
    static let keyBytes = Int(crypto_aead_xchacha20poly1305_ietf_KEYBYTES)  // 32
    static let nonceBytes = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)  // 24
    static let tagBytes = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)  // 16
    static let saltBytes = Int(crypto_pwhash_SALTBYTES)  // 16

    private static let initialized: Bool = sodium_init() >= 0
    static func initialize() { precondition(initialized, "sodium_init failed") }

    static func randomBytes(_ count: Int) -> [UInt8] {
        initialize()
        var out = [UInt8](repeating: 0, count: count)
        randombytes_buf(&out, count)
        return out
    }

    static func randomKey() -> SecureBytes {
        initialize()
        let key = SecureBytes(count: keyBytes)
        key.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, $0.count) }
        return key
    }

    /// XChaCha20-Poly1305 (IETF): returns nonce ‖ ciphertext ‖ tag, with a fresh random nonce.
    static func seal(_ plaintext: UnsafeRawBufferPointer, key: SecureBytes, associatedData: [UInt8]) -> [UInt8] {
        initialize()
        let nonce = randomBytes(nonceBytes)
        var out = nonce + [UInt8](repeating: 0, count: plaintext.count + tagBytes)
        var written: UInt64 = 0
        let rc = key.withUnsafeBytes { k in
            out.withUnsafeMutableBufferPointer { o in
                crypto_aead_xchacha20poly1305_ietf_encrypt(
                    o.baseAddress! + nonceBytes, &written,
                    plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count),
                    associatedData, UInt64(associatedData.count), nil, nonce,
                    k.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        precondition(rc == 0 && Int(written) == plaintext.count + tagBytes)
        return out
    }

    /// Opens nonce ‖ ciphertext ‖ tag into a secure buffer; `nil` when authentication fails.
    static func open(_ sealed: ArraySlice<UInt8>, key: SecureBytes, associatedData: [UInt8],
                     allocation: SecureBytes.Allocation = .guarded) -> SecureBytes? {
        guard sealed.count >= nonceBytes + tagBytes else { return nil }
        let plain = SecureBytes(count: sealed.count - nonceBytes - tagBytes, allocation: allocation)
        let ok = plain.withUnsafeMutableBytes { decrypt(sealed, into: $0, key: key, associatedData: associatedData) }
        return ok ? plain : nil
    }

    /// Opens into an ordinary array: for plaintext that holds no secret in clear (a log frame,
    /// whose private keys are sealed again inside), where a guarded allocation per frame would
    /// dominate the cost of opening a large vault.
    static func openNonSecret(_ sealed: ArraySlice<UInt8>, key: SecureBytes, associatedData: [UInt8]) -> [UInt8]? {
        guard sealed.count >= nonceBytes + tagBytes else { return nil }
        var plain = [UInt8](repeating: 0, count: sealed.count - nonceBytes - tagBytes)
        let ok = plain.withUnsafeMutableBytes { decrypt(sealed, into: $0, key: key, associatedData: associatedData) }
        return ok ? plain : nil
    }

    private static func decrypt(_ sealed: ArraySlice<UInt8>, into plain: UnsafeMutableRawBufferPointer, key: SecureBytes,
                                associatedData: [UInt8]) -> Bool {
        var written: UInt64 = 0
        let rc = sealed.withUnsafeBufferPointer { s in
            key.withUnsafeBytes { k in
                crypto_aead_xchacha20poly1305_ietf_decrypt(
                    plain.baseAddress!.assumingMemoryBound(to: UInt8.self), &written, nil,
                    s.baseAddress! + nonceBytes, UInt64(s.count - nonceBytes),
                    associatedData, UInt64(associatedData.count), s.baseAddress!,
                    k.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        return rc == 0
    }

    /// Argon2id (`crypto_pwhash`, ALG_ARGON2ID13) of `secret` into a 32-byte key.
    static func deriveKey(from secret: SecureBytes, salt: [UInt8], opslimit: UInt64, memlimit: UInt64) throws(VaultError) -> SecureBytes {
        initialize()
        let key = SecureBytes(count: keyBytes)
        let rc = secret.withUnsafeBytes { s in
            key.withUnsafeMutableBytes { k in
                crypto_pwhash(
                    k.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(k.count),
                    s.baseAddress!.assumingMemoryBound(to: CChar.self), UInt64(s.count), salt,
                    opslimit, Int(clamping: memlimit), crypto_pwhash_ALG_ARGON2ID13)
            }
        }
        guard rc == 0 else { throw VaultError(.io, "Argon2id could not allocate \(memlimit) bytes of memory") }
        return key
    }

    /// BLAKE2b-256 (`crypto_generichash`): the header's integrity checksum.
    static func checksum(_ data: [UInt8]) -> [UInt8] {
        initialize()
        var out = [UInt8](repeating: 0, count: 32)
        crypto_generichash(&out, 32, data, UInt64(data.count), nil, 0)
        return out
    }

    /// BLAKE2b of `data` keyed by `key` (16 to 64 bytes), `length` bytes (16 to 64) into a secure
    /// buffer: a key derived from another.
    static func keyedHash(_ data: [UInt8], key: SecureBytes, length: Int, allocation: SecureBytes.Allocation = .guarded) -> SecureBytes {
        initialize()
        precondition((Int(crypto_generichash_BYTES_MIN)...Int(crypto_generichash_BYTES_MAX)).contains(length)
                     && (Int(crypto_generichash_KEYBYTES_MIN)...Int(crypto_generichash_KEYBYTES_MAX)).contains(key.count))
        let out = SecureBytes(count: length, allocation: allocation)
        out.withUnsafeMutableBytes { o in
            key.withUnsafeBytes { k in
                _ = crypto_generichash(o.baseAddress!.assumingMemoryBound(to: UInt8.self), length, data, UInt64(data.count),
                                       k.baseAddress!.assumingMemoryBound(to: UInt8.self), k.count)
            }
        }
        return out
    }
}

/// Wipes a buffer the caller owns (libsodium's `sodium_memzero`, which the compiler cannot elide).
func sodiumWipe(_ buffer: UnsafeMutableRawBufferPointer) {
    if let base = buffer.baseAddress { sodium_memzero(base, buffer.count) }
}
