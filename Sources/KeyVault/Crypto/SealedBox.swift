import CSodium

/// An X25519 key pair whose public half anyone can seal to and only the holder of the secret half
/// can open (libsodium's `crypto_box_seal`: an ephemeral key pair, X25519 and XSalsa20-Poly1305).
/// A device joining an account makes one for the ceremony and keeps it in memory only: what an
/// approving device sends back (the account's keys) crosses the store sealed for that device alone.
package struct SealedBoxKeyPair {
    package let publicKey: [UInt8]
    private let secretKey: SecureBytes

    package static let publicKeyBytes = Int(crypto_box_PUBLICKEYBYTES)  // 32
    /// What sealing adds to the plaintext.
    package static let overhead = Int(crypto_box_sealbytes())  // 48

    /// A fresh key pair.
    package init() {
        Sodium.initialize()
        var pk = [UInt8](repeating: 0, count: Self.publicKeyBytes)
        let sk = SecureBytes(count: Int(crypto_box_SECRETKEYBYTES))
        _ = sk.withUnsafeMutableBytes { s in crypto_box_keypair(&pk, s.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
        publicKey = pk
        secretKey = sk
    }

    /// `plaintext` sealed to `publicKey`, or `nil` when the key is not a key.
    package static func seal(_ plaintext: SecureBytes, to publicKey: [UInt8]) -> [UInt8]? {
        Sodium.initialize()
        guard publicKey.count == publicKeyBytes, plaintext.count > 0 else { return nil }
        var out = [UInt8](repeating: 0, count: plaintext.count + overhead)
        let status = plaintext.withUnsafeBytes { p in
            crypto_box_seal(&out, p.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(p.count), publicKey)
        }
        return status == 0 ? out : nil
    }

    /// What was sealed to this pair's public key, or `nil` when `sealed` was not (or was altered).
    package func open(_ sealed: [UInt8]) -> SecureBytes? {
        guard sealed.count > Self.overhead else { return nil }
        let plain = SecureBytes(count: sealed.count - Self.overhead)
        let status = plain.withUnsafeMutableBytes { p in
            secretKey.withUnsafeBytes { s in
                crypto_box_seal_open(p.baseAddress!.assumingMemoryBound(to: UInt8.self), sealed, UInt64(sealed.count), publicKey,
                                     s.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        return status == 0 ? plain : nil
    }
}

extension SealingKey {
    /// A key derived from a short secret a person carries (a join code, a recovery secret) with
    /// Argon2id at `kdf`'s limits and `salt` (16 bytes).
    package static func derived(from secret: SecureBytes, salt: [UInt8], kdf: KDFLevel) throws(VaultError) -> SealingKey {
        SealingKey(try Sodium.deriveKey(from: secret, salt: salt, opslimit: kdf.opslimit, memlimit: kdf.memlimit))
    }

    /// A key of its own for `context` (1 to 64 bytes), from this one: BLAKE2b-256 of `context`
    /// keyed by this key. Knowing one such key tells nothing of this key or of another context's.
    package func subkey(_ context: String) -> SealingKey {
        SealingKey(Sodium.keyedHash(Array(context.utf8.prefix(64)), key: bytes, length: Sodium.keyBytes))
    }

    /// A name for this key under `context` that may be shown (BLAKE2b of `context` keyed by this
    /// key, `length` bytes): the name tells nothing of the key, and finding the key from it costs
    /// what finding this key costs.
    package func fingerprint(_ context: String, length: Int = 16) -> [UInt8] {
        Sodium.keyedHash(Array(context.utf8.prefix(64)), key: bytes, length: length, allocation: .transient).withUnsafeBytes { Array($0) }
    }

    /// The key's 32 bytes, for sealing it into something else (a join reply, a recovery envelope).
    package func withRawBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R { bytes.withUnsafeBytes(body) }

    /// A key from 32 bytes held in secure memory.
    package init?(copying raw: UnsafeRawBufferPointer) {
        guard raw.count == Sodium.keyBytes else { return nil }
        self.init(SecureBytes(copying: raw))
    }
}
