/// A 32-byte key for XChaCha20-Poly1305 that a caller holds outside any vault file: the account
/// key that seals what a device uploads to the account store, so the store (the stand-in for the
/// cloud) never sees a passkey or its metadata in clear.
package struct SealingKey {
    let bytes: SecureBytes

    init(_ bytes: SecureBytes) { self.bytes = bytes }

    /// A fresh random key.
    package static func random() -> SealingKey { SealingKey(Sodium.randomKey()) }

    /// nonce ‖ ciphertext ‖ tag of `plaintext`, bound to `associatedData`.
    package func seal(_ plaintext: [UInt8], associatedData: [UInt8]) -> [UInt8] {
        plaintext.withUnsafeBytes { Sodium.seal($0, key: bytes, associatedData: associatedData) }
    }

    /// The plaintext, or `nil` when the bytes or their associated data were changed.
    package func open(_ sealed: [UInt8], associatedData: [UInt8]) -> [UInt8]? {
        Sodium.openNonSecret(sealed[...], key: bytes, associatedData: associatedData)
    }

    /// The plaintext into a transient secure buffer (for a secret inside a sealed object, used
    /// for one operation).
    package func openSecret(_ sealed: [UInt8], associatedData: [UInt8]) -> SecureBytes? {
        Sodium.open(sealed[...], key: bytes, associatedData: associatedData, allocation: .transient)
    }

    /// Seals a secret held in secure memory.
    package func sealSecret(_ secret: SecureBytes, associatedData: [UInt8]) -> [UInt8] {
        secret.withUnsafeBytes { Sodium.seal($0, key: bytes, associatedData: associatedData) }
    }
}

extension Vault {
    /// Seals `key` as a secret of record `recordId`, for keeping it in a field.
    package func sealSecret(_ key: SealingKey, recordId: [UInt8]) -> [UInt8] {
        key.bytes.withUnsafeBytes { sealSecret($0, recordId: recordId) }
    }

    /// A key kept with ``sealSecret(_:recordId:)-(SealingKey,_)``.
    package func openSealingKey(_ sealed: [UInt8], recordId: [UInt8]) throws(VaultError) -> SealingKey {
        let bytes = try openSecret(sealed, recordId: recordId)
        guard bytes.count == Sodium.keyBytes else { throw VaultError(.corrupted, "a sealed key of record \(hex(recordId)) is not 32 bytes") }
        // A key lives as long as the account is open: a guarded copy.
        return SealingKey(bytes.withUnsafeBytes { SecureBytes(copying: $0) })
    }

    /// Re-seals a secret of record `from` as one of record `to` (a passkey's private key copied into
    /// a new revision), without its plaintext leaving secure memory.
    package func resealSecret(_ sealed: [UInt8], from: [UInt8], to: [UInt8]) throws(VaultError) -> [UInt8] {
        let secret = try openSecret(sealed, recordId: from)
        return secret.withUnsafeBytes { sealSecret($0, recordId: to) }
    }
}
