import CSodium

/// The biometric gate's key (see docs/biometry.md). A random 32-byte biometry key is wrapped
/// under a key derived from the PIN (Argon2id at the vault's KDF limits, its own salt); private
/// keys of passkeys made with user verification are sealed under it *inside* their vault-key
/// seal. Knowing the vault passphrase and editing the vault's files therefore does not give such
/// a key without the PIN: the PIN check is the unwrap, not a flag.
package struct BiometryEnrollment: Equatable, Sendable {
    package let salt: [UInt8]
    /// nonce ‖ XChaCha20-Poly1305(biometry key) ‖ tag; AD "AUTHCTL-BIOMETRY" ‖ vault id.
    package let wrappedKey: [UInt8]
    /// The Argon2id limits the PIN key was derived with: the vault's at enrollment, kept here so a
    /// later passphrase change to another KDF level leaves the PIN working.
    package let opslimit: UInt64
    package let memlimit: UInt64

    package init(salt: [UInt8], wrappedKey: [UInt8], opslimit: UInt64, memlimit: UInt64) throws(VaultError) {
        guard salt.count == Sodium.saltBytes, VaultHeader.opslimits.contains(opslimit), VaultHeader.memlimits.contains(memlimit) else {
            throw VaultError(.corrupted, "the biometric enrollment's salt or KDF limits are out of range")
        }
        self.salt = salt
        self.wrappedKey = wrappedKey
        self.opslimit = opslimit
        self.memlimit = memlimit
    }
}

extension Vault {
    private var biometryAssociatedData: [UInt8] { Array("AUTHCTL-BIOMETRY".utf8) + header.vaultId }



    /// Wraps `biometryKey` (a fresh random one when `nil`) under `pin`. Returns the enrollment to
    /// store and the key itself.
    package func enrollBiometry(pin: SecureBytes, keeping biometryKey: SecureBytes? = nil) throws(VaultError)
        -> (BiometryEnrollment, SecureBytes)
    {
        let key = biometryKey ?? Sodium.randomKey()
        let salt = Sodium.randomBytes(Sodium.saltBytes)
        let wrapping = try Sodium.deriveKey(from: pin, salt: salt, opslimit: header.opslimit, memlimit: header.memlimit)
        let wrapped = key.withUnsafeBytes { Sodium.seal($0, key: wrapping, associatedData: biometryAssociatedData) }
        return (try BiometryEnrollment(salt: salt, wrappedKey: wrapped, opslimit: header.opslimit, memlimit: header.memlimit), key)
    }

    /// The biometry key if `pin` is the enrolled PIN; `nil` if it is not.
    package func unlockBiometry(pin: SecureBytes, _ enrollment: BiometryEnrollment) throws(VaultError) -> SecureBytes? {
        let wrapping = try Sodium.deriveKey(from: pin, salt: enrollment.salt, opslimit: enrollment.opslimit,
                                            memlimit: enrollment.memlimit)
        guard let key = Sodium.open(enrollment.wrappedKey[...], key: wrapping, associatedData: biometryAssociatedData),
              key.count == Sodium.keyBytes
        else { return nil }
        return key
    }

    private func innerAssociatedData(_ itemId: [UInt8], vaultId: [UInt8]? = nil) -> [UInt8] {
        Array("AUTHCTL-UV-SECRET".utf8) + (vaultId ?? header.vaultId) + itemId
    }

    /// Seals a secret under the biometry key (bound to `itemId`, the passkey's stable identity;
    /// the record's own id when absent), then (like every secret) under the vault key (bound to
    /// `recordId`).
    package func sealSecret(_ secret: UnsafeRawBufferPointer, recordId: [UInt8], biometryKey: SecureBytes,
                           itemId: [UInt8]? = nil) -> [UInt8] {
        var inner = Sodium.seal(secret, key: biometryKey, associatedData: innerAssociatedData(itemId ?? recordId))
        defer { inner.withUnsafeMutableBytes { sodiumWipe($0) } }
        return inner.withUnsafeBytes { sealSecret($0, recordId: recordId) }
    }

    /// Opens a secret sealed with ``sealSecret(_:recordId:biometryKey:itemId:)``; throws `locked`
    /// when the biometry key is not the one it was sealed under.
    package func openSecret(_ sealed: [UInt8], recordId: [UInt8], biometryKey: SecureBytes,
                           itemId: [UInt8]? = nil) throws(VaultError) -> SecureBytes {
        try openBiometrySealed(try openSecret(sealed, recordId: recordId), itemId: itemId ?? recordId, biometryKey: biometryKey)
    }

    /// Opens the inner, biometry-key layer of a secret whose outer layer was already opened
    /// (by the vault key, or by the account key for a passkey that came from the account store).
    /// `vaultId`: the vault whose id the inner layer is bound to, when it was sealed in another
    /// vault of the account (this one's when `nil`).
    package func openBiometrySealed(_ inner: SecureBytes, itemId: [UInt8], biometryKey: SecureBytes,
                                    vaultId: [UInt8]? = nil) throws(VaultError) -> SecureBytes {
        let bytes = inner.withUnsafeBytes { Array($0) }
        guard let plain = Sodium.open(bytes[...], key: biometryKey, associatedData: innerAssociatedData(itemId, vaultId: vaultId),
                                      allocation: .transient) else {
            throw VaultError(.locked, "this passkey is sealed under a different biometric enrollment")
        }
        return plain
    }
}

/// What a process keeps of a biometric PIN it checked, in place of the PIN (docs/biometry.md,
/// "What a process keeps"): BLAKE2b-256 of the PIN keyed by a random key this process drew at its
/// first use and never writes anywhere. A PIN presented later is compared with the one checked in
/// constant time (``SecureBytes/==``) without the PIN itself being kept, and a verifier means
/// nothing outside the process that made it: guessing a PIN against it needs the process's key,
/// which lies beside it in the same guarded memory.
package enum ProcessVerifier {
    nonisolated(unsafe) private static let pinKey = Sodium.randomKey()
    nonisolated(unsafe) private static let tagKey = Sodium.randomKey()

    /// The verifier of `pin`, 32 bytes in guarded memory; compare two with `==`.
    package static func of(pin: SecureBytes) -> SecureBytes { hash(pin, key: pinKey, length: 32) }

    /// A 16-byte name, in this process, of the biometry key `key`: which key a private key kept
    /// in memory was opened under, without keeping that key a second time.
    package static func tag(of key: SecureBytes) -> [UInt8] { hash(key, key: tagKey, length: 16).withUnsafeBytes { Array($0) } }

    private static func hash(_ secret: SecureBytes, key: SecureBytes, length: Int) -> SecureBytes {
        Sodium.initialize()
        let out = SecureBytes(count: length)
        out.withUnsafeMutableBytes { o in
            secret.withUnsafeBytes { s in
                key.withUnsafeBytes { k in
                    _ = crypto_generichash(o.baseAddress!.assumingMemoryBound(to: UInt8.self), length,
                                           s.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(s.count),
                                           k.baseAddress!.assumingMemoryBound(to: UInt8.self), k.count)
                }
            }
        }
        return out
    }
}
