@_spi(ByteOrder) import ByteOrder

/// A secret sealed under a passphrase alone, to leave the vault (`credential export`): Argon2id
/// turns the passphrase into a key, XChaCha20-Poly1305 seals the secret under it. Layout:
///
///     magic "AUTHCTL-PASSKEY1" (16) ‖ opslimit (8, BE) ‖ memlimit (8, BE) ‖ salt (16)
///     ‖ nonce (24) ‖ ciphertext ‖ tag (16)
///
/// The header is the associated data, so no KDF limit can be lowered without the seal failing.
package enum PassphraseEnvelope {
    package static let magic = Array("AUTHCTL-PASSKEY1".utf8)
    static let headerLength = 16 + 8 + 8 + 16
    /// The largest limits an envelope may ask for: libsodium's `sensitive`.
    static let maxOpslimit = KDFLevel.sensitive.opslimit, maxMemlimit = KDFLevel.sensitive.memlimit

    package static func seal(_ secret: SecureBytes, passphrase: SecureBytes, kdf: KDFLevel) throws(VaultError) -> [UInt8] {
        guard passphrase.count > 0 else { throw VaultError(.invalid, "the export passphrase is empty") }
        let header = magic + BigEndianBytes.of(kdf.opslimit) + BigEndianBytes.of(kdf.memlimit) + Sodium.randomBytes(16)
        let key = try Sodium.deriveKey(from: passphrase, salt: Array(header.suffix(16)), opslimit: kdf.opslimit, memlimit: kdf.memlimit)
        return header + secret.withUnsafeBytes { Sodium.seal($0, key: key, associatedData: header) }
    }

    package static func open(_ envelope: [UInt8], passphrase: SecureBytes) throws(VaultError) -> SecureBytes {
        guard envelope.count > headerLength, envelope.starts(with: magic) else {
            throw VaultError(.invalid, "not an exported passkey (no AUTHCTL-PASSKEY1 header)")
        }
        let header = Array(envelope.prefix(headerLength))
        let opslimit: UInt64 = BigEndianBytes.integer(header[16..<24]), memlimit: UInt64 = BigEndianBytes.integer(header[24..<32])
        guard (1...maxOpslimit).contains(opslimit), (8192...maxMemlimit).contains(memlimit) else {
            throw VaultError(.invalid, "the exported passkey asks for KDF limits out of range")
        }
        let key = try Sodium.deriveKey(from: passphrase, salt: Array(header[32..<48]), opslimit: opslimit, memlimit: memlimit)
        guard let plain = Sodium.open(envelope[headerLength...], key: key, associatedData: header) else {
            throw VaultError(.locked, "wrong passphrase, or the exported passkey was altered")
        }
        return plain
    }
}
