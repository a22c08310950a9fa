@_spi(ByteOrder) import ByteOrder

/// The vault's header file, `header` (see docs/vault-format.md). Fixed layout, big-endian:
///
///     magic "AUTHCTLV" (8) ‖ formatVersion u16 ‖ kdfAlgorithm u8 ‖ opslimit u64 ‖ memlimit u64
///     ‖ salt (16) ‖ vaultId (16) ‖ wrappedKey: nonce (24) ‖ ciphertext (32) ‖ tag (16)
///     ‖ checksum: BLAKE2b-256 of everything before it (32)
///
/// The wrapped vault key is sealed under the passphrase-derived key with every byte before it as
/// associated data, so the KDF parameters and vault id cannot be changed without detection.
struct VaultHeader: Equatable {
    static let magic = Array("AUTHCTLV".utf8)
    static let formatVersion: UInt16 = 1
    static let kdfArgon2id13: UInt8 = 2  // libsodium's crypto_pwhash_ALG_ARGON2ID13
    static let wrappedKeyLength = Sodium.nonceBytes + Sodium.keyBytes + Sodium.tagBytes
    static let size = 8 + 2 + 1 + 8 + 8 + 16 + 16 + wrappedKeyLength + 32
    /// How much of a `header` file is read: any header this size or smaller has its version
    /// checked (a newer format's may be larger); a larger file is damage.
    static let largestRead = 64 * 1024
    /// KDF limits a header may carry: libsodium's minimum up to its `sensitive` level. The checksum
    /// is not a key, so anyone who can write the header can set these; the bound caps what one
    /// open can be made to cost (`sensitive`: about 1 GiB and a few seconds) before it is refused.
    static let opslimits = KDFLevel.min.opslimit...KDFLevel.sensitive.opslimit
    static let memlimits = KDFLevel.min.memlimit...KDFLevel.sensitive.memlimit

    var opslimit: UInt64
    var memlimit: UInt64
    var salt: [UInt8]
    var vaultId: [UInt8]
    var wrappedKey: [UInt8]

    /// The bytes the wrapped key is bound to.
    var associatedData: [UInt8] {
        var w = ByteWriter()
        w.append(Self.magic)
        w.append(Self.formatVersion)
        w.append(Self.kdfArgon2id13)
        w.append(opslimit)
        w.append(memlimit)
        w.append(salt)
        w.append(vaultId)
        return w.bytes
    }

    var bytes: [UInt8] {
        let body = associatedData + wrappedKey
        return body + Sodium.checksum(body)
    }

    init(opslimit: UInt64, memlimit: UInt64, salt: [UInt8], vaultId: [UInt8], wrappedKey: [UInt8]) {
        self.opslimit = opslimit
        self.memlimit = memlimit
        self.salt = salt
        self.vaultId = vaultId
        self.wrappedKey = wrappedKey
    }

    init(parsing data: [UInt8]) throws(VaultError) {
        guard data.count >= 8, Array(data.prefix(8)) == Self.magic else {
            throw VaultError(.corrupted, "the header does not start with the authctl vault magic")
        }
        // Every version's header ends in the checksum of all before it, so damage is told apart
        // from a newer format first: a flipped bit of the version is damage, not "too new".
        guard data.count >= 10 + 32, Sodium.checksum(Array(data.dropLast(32))) == Array(data.suffix(32)) else {
            throw VaultError(.corrupted, "the header's checksum does not match: it was damaged or edited")
        }
        // The version before the size: a newer format's header may be of another size, and is
        // too new, not damaged. Version 0 was never written: that is damage.
        let version = BigEndianBytes.integer(data[8..<10]) as UInt16
        guard version <= Self.formatVersion else {
            throw VaultError(.tooNew, "the vault is format version \(version), newer than this authctl reads (version \(Self.formatVersion)): open it with a newer authctl; nothing was changed")
        }
        guard version == Self.formatVersion else {
            throw VaultError(.corrupted, "vault format version \(version) is not supported (this authctl reads version 1)")
        }
        guard data.count == Self.size else {
            throw VaultError(.corrupted, "the header is \(data.count) bytes; a version-1 header is \(Self.size)")
        }
        var r = ByteReader(data, context: "header")
        _ = try r.take(10)
        guard try r.read(UInt8.self) == Self.kdfArgon2id13 else {
            throw VaultError(.corrupted, "unknown key-derivation algorithm")
        }
        opslimit = try r.read(UInt64.self)
        memlimit = try r.read(UInt64.self)
        // The checksum is not a key: bound the KDF limits before they cost anything.
        guard Self.opslimits.contains(opslimit), Self.memlimits.contains(memlimit) else {
            throw VaultError(.corrupted, "the header's KDF limits (opslimit \(opslimit), memlimit \(memlimit)) are out of range")
        }
        salt = try r.take(16)
        vaultId = try r.take(16)
        wrappedKey = try r.take(Self.wrappedKeyLength)
    }
}
