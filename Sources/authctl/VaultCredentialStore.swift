import KeyVault
import VirtualAuthenticator

/// The adapter that joins the authenticator to the vault: credentials become `credential`
/// records (field tags below, documented in docs/vault-format.md); private keys are sealed
/// secrets inside them, opened only for the signature at hand.
final class VaultCredentialStore: CredentialStore {
    enum Tag {
        static let credentialId: UInt8 = 1, rpId: UInt8 = 2, userHandle: UInt8 = 3, userName: UInt8 = 4
        static let userDisplayName: UInt8 = 5, createdAt: UInt8 = 6, signCount: UInt8 = 7
        static let backupFlags: UInt8 = 8, publicPoint: UInt8 = 9, sealedPrivateKey: UInt8 = 10
        static let algorithm: UInt8 = 11, countsSignatures: UInt8 = 12, requiresUserVerification: UInt8 = 13
    }

    let vault: Vault
    /// Holds the biometry key once the user was verified; `nil` where no ceremony runs (list).
    let gate: BiometricGate?
    private var recordIds: [[UInt8]: [UInt8]] = [:]  // credential id → record id

    init(vault: Vault, gate: BiometricGate? = nil) {
        self.vault = vault
        self.gate = gate
    }

    /// The biometry key a passkey made with user verification is sealed under.
    private func biometryKey(for credential: Credential) throws -> SecureBytes {
        guard let key = gate?.biometryKey else {
            throw AuthenticatorError(.failed, "passkey \(Base64URL.encode(credential.id)) needs user verification to be used")
        }
        return key
    }

    /// Every credential in the vault, oldest first.
    func allCredentials() throws -> [Credential] {
        try vault.records(kind: .credential).map { record in
            let credential = try Self.decode(record)
            recordIds[credential.id] = record.id
            return credential
        }
    }

    /// Only the records of this RP are decoded, found through the vault's field index.
    func credentials(forRP rpId: String) throws -> [Credential] {
        return try vault.records(kind: .credential, field: Tag.rpId, equals: Array(rpId.utf8)).map { record in
            let credential = try Self.decode(record)
            recordIds[credential.id] = record.id
            return credential
        }
    }

    func privateKey(for credential: Credential) throws -> P256PrivateKey {
        let record = try record(of: credential)
        guard let sealed = record.field(Tag.sealedPrivateKey).map(Array.init) else {
            throw AuthenticatorError(.vaultCorrupted, "credential \(Base64URL.encode(credential.id)) has no private key")
        }
        let der = credential.requiresUserVerification
            ? try vault.openSecret(sealed, recordId: record.id, biometryKey: try biometryKey(for: credential))
            : try vault.openSecret(sealed, recordId: record.id)
        do {
            return try der.withUnsafeBytes { buffer throws(OpenSSLFailure) in try P256PrivateKey.load(der: buffer) }
        } catch {
            throw AuthenticatorError(.vaultCorrupted, "the private key of credential \(Base64URL.encode(credential.id)) is not a P-256 key")
        }
    }

    func save(_ credential: Credential, privateKey: P256PrivateKey, replacing: [Credential]) throws {
        let record = try newRecord(for: credential, privateKey: privateKey)
        try vault.commit(try replacing.map { old in try tombstone(for: old) } + [record])
        recordIds[credential.id] = record.id
    }

    /// A credential record ready to commit, for building vaults in bulk (fixtures, benchmarks).
    func newRecord(for credential: Credential, privateKey: P256PrivateKey) throws -> VaultRecord {
        let recordId = VaultRecord.newId()
        let der = SecureBytes(count: privateKey.privateKeyDERCount)
        let length = try der.withUnsafeMutableBytes { buffer throws(OpenSSLFailure) in try privateKey.writePrivateKeyDER(into: buffer) }
        let biometryKey = credential.requiresUserVerification ? try self.biometryKey(for: credential) : nil
        let sealed = der.withUnsafeBytes { buffer in
            let secret = UnsafeRawBufferPointer(rebasing: buffer.prefix(length))
            return biometryKey.map { vault.sealSecret(secret, recordId: recordId, biometryKey: $0) }
                ?? vault.sealSecret(secret, recordId: recordId)
        }
        return VaultRecord(id: recordId, kind: .credential, fields: Self.fields(of: credential, sealedKey: sealed))
    }

    func updateSignCount(of credential: Credential, to count: UInt32) throws {
        let record = try self.record(of: credential)
        var updated = record
        updated.version += 1
        updated.fields[Tag.signCount] = bigEndian(count)
        try vault.commit([updated])
    }

    static func fields(of credential: Credential, sealedKey: [UInt8]) -> [UInt8: [UInt8]] {
        [
            Tag.credentialId: credential.id,
            Tag.rpId: Array(credential.rpId.utf8),
            Tag.userHandle: credential.userHandle,
            Tag.userName: Array(credential.userName.utf8),
            Tag.userDisplayName: Array(credential.userDisplayName.utf8),
            Tag.createdAt: bigEndian(credential.createdAt),
            Tag.signCount: bigEndian(credential.signCount),
            Tag.backupFlags: [(credential.backupEligible ? 1 : 0) | (credential.backupState ? 2 : 0)],
            Tag.publicPoint: credential.publicPoint,
            Tag.sealedPrivateKey: sealedKey,
            Tag.algorithm: bigEndian(Int32(COSEKey.es256)),
            Tag.countsSignatures: [credential.countsSignatures ? 1 : 0],
            Tag.requiresUserVerification: [credential.requiresUserVerification ? 1 : 0],
        ]
    }

    /// Deletes a credential: a tombstone, so the deletion can later travel to other devices.
    func delete(_ credential: Credential) throws {
        try vault.commit([try tombstone(for: credential)])
    }

    private func tombstone(for credential: Credential) throws -> VaultRecord {
        let record = try record(of: credential)
        return VaultRecord(id: record.id, kind: .tombstone, version: record.version + 1)
    }

    private func record(of credential: Credential) throws -> VaultRecord {
        if let recordId = recordIds[credential.id], let record = vault.record(id: recordId) { return record }
        return try Self.record(of: credential, in: vault)
    }

    /// The live record holding `credential`, found through the RP index.
    static func record(of credential: Credential, in vault: Vault) throws -> VaultRecord {
        let candidates = vault.records(kind: .credential, field: Tag.rpId, equals: Array(credential.rpId.utf8))
        guard let record = candidates.first(where: { $0.field(Tag.credentialId)?.elementsEqual(credential.id) ?? false }) else {
            throw AuthenticatorError(.notHandled, "credential \(Base64URL.encode(credential.id)) is not in the vault")
        }
        return record
    }

    static func decode(_ record: VaultRecord) throws -> Credential {
        func field(_ tag: UInt8) throws -> [UInt8] {
            guard let value = record.field(tag).map(Array.init) else {
                throw AuthenticatorError(.vaultCorrupted, "a credential record lacks field \(tag)")
            }
            return value
        }
        func text(_ tag: UInt8) throws -> String {
            guard let s = String(validating: try field(tag), as: UTF8.self) else {
                throw AuthenticatorError(.vaultCorrupted, "field \(tag) of a credential record is not UTF-8")
            }
            return s
        }
        func integer<T: FixedWidthInteger>(_ tag: UInt8, _: T.Type) throws -> T {
            let bytes = try field(tag)
            guard bytes.count == MemoryLayout<T>.size else {
                throw AuthenticatorError(.vaultCorrupted, "field \(tag) of a credential record has the wrong length")
            }
            return bytes.reduce(T(0)) { $0 << 8 | T($1) }
        }
        let flags = try field(Tag.backupFlags).first ?? 0
        return Credential(
            id: try field(Tag.credentialId), rpId: try text(Tag.rpId), userHandle: try field(Tag.userHandle),
            userName: try text(Tag.userName), userDisplayName: try text(Tag.userDisplayName),
            createdAt: try integer(Tag.createdAt, UInt64.self), signCount: try integer(Tag.signCount, UInt32.self),
            backupEligible: flags & 1 != 0, backupState: flags & 2 != 0, publicPoint: try field(Tag.publicPoint),
            countsSignatures: record.field(Tag.countsSignatures)?.elementsEqual([1]) ?? false,
            requiresUserVerification: record.field(Tag.requiresUserVerification)?.elementsEqual([1]) ?? false)
    }
}

func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
    withUnsafeBytes(of: value.bigEndian, Array.init)
}
