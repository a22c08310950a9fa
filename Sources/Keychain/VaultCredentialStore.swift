import KeyVault
import VirtualAuthenticator

/// The authenticator's store port over the vault: passkeys are `credential` records
/// (``CredentialRecord``); private keys are sealed secrets inside them, opened only for the
/// signature at hand. A passkey made with user verification is sealed a second time, under the
/// biometry key, which only a ``BiometricSensor/Unlock`` from this ceremony provides.
final class VaultCredentialStore: CredentialStore {
    typealias Verification = BiometricSensor.Unlock

    let vault: Vault
    private var recordIds: [[UInt8]: [UInt8]] = [:]  // credential id → record id

    init(vault: Vault) { self.vault = vault }

    /// Every credential in the vault, oldest first.
    func allCredentials() throws(VaultError) -> [Credential] {
        try decode(vault.records(kind: .credential))
    }

    /// Only the records of this RP are decoded, found through the vault's field index.
    func credentials(forRP rpId: String) throws(AuthenticatorError) -> [Credential] {
        do { return try decode(recordsOf(rpId: rpId)) } catch { throw AuthenticatorError(error) }
    }

    func privateKey(for credential: Credential, verification: BiometricSensor.Unlock?) throws(AuthenticatorError) -> P256PrivateKey {
        do { return try unsealedKey(of: credential, verification: verification) } catch { throw AuthenticatorError(error) }
    }

    func save(_ credential: Credential, privateKey: P256PrivateKey, replacing: [Credential],
              verification: BiometricSensor.Unlock?) throws(AuthenticatorError) {
        do {
            let record = try newRecord(for: credential, privateKey: privateKey, verification: verification)
            try vault.commit(try tombstones(for: replacing) + [record])
            recordIds[credential.id] = record.id
        } catch { throw AuthenticatorError(error) }
    }

    func updateSignCount(of credential: Credential, to count: UInt32) throws(AuthenticatorError) {
        do {
            var updated = try record(of: credential)
            updated.version += 1
            updated.setInteger(CredentialRecord.Tag.signCount, count)
            try vault.commit([updated])
        } catch { throw AuthenticatorError(error) }
    }

    /// The private key of `credential`, opened with the biometry key when it was sealed under one.
    func unsealedKey(of credential: Credential, verification: BiometricSensor.Unlock?) throws(VaultError) -> P256PrivateKey {
        let record = try record(of: credential)
        guard let sealed = record.field(CredentialRecord.Tag.sealedPrivateKey).map(Array.init) else {
            throw VaultError(.corrupted, "credential \(Base64URL.encode(credential.id)) has no private key")
        }
        let der = try credential.requiresUserVerification
            ? vault.openSecret(sealed, recordId: record.id, biometryKey: try biometryKey(for: credential, verification))
            : vault.openSecret(sealed, recordId: record.id)
        do {
            return try der.withUnsafeBytes { buffer throws(OpenSSLFailure) in try P256PrivateKey.load(der: buffer) }
        } catch {
            throw VaultError(.corrupted, "the private key of credential \(Base64URL.encode(credential.id)) is not a P-256 key")
        }
    }

    /// A credential record ready to commit; a passkey made with user verification is sealed under
    /// the biometry key `verification` carries.
    func newRecord(for credential: Credential, privateKey: P256PrivateKey, verification: BiometricSensor.Unlock?) throws(VaultError) -> VaultRecord {
        let recordId = VaultRecord.newId()
        let der = SecureBytes(count: privateKey.privateKeyDERCount)
        let length: Int
        do {
            length = try der.withUnsafeMutableBytes { buffer throws(OpenSSLFailure) in try privateKey.writePrivateKeyDER(into: buffer) }
        } catch {
            throw VaultError(.invalid, "OpenSSL could not encode the new private key: \(error)")
        }
        let biometryKey = credential.requiresUserVerification ? try biometryKey(for: credential, verification) : nil
        let sealed = der.withUnsafeBytes { buffer in
            let secret = UnsafeRawBufferPointer(rebasing: buffer.prefix(length))
            return biometryKey.map { vault.sealSecret(secret, recordId: recordId, biometryKey: $0) }
                ?? vault.sealSecret(secret, recordId: recordId)
        }
        return CredentialRecord.make(id: recordId, for: credential, sealedKey: sealed)
    }

    /// Deletes credentials: tombstones, so a deletion can later travel to other devices.
    func delete(_ credentials: [Credential]) throws(VaultError) {
        try vault.commit(try tombstones(for: credentials))
    }

    /// The records that delete `credentials` when committed.
    func tombstones(for credentials: [Credential]) throws(VaultError) -> [VaultRecord] {
        var out = [VaultRecord]()
        for credential in credentials {
            let record = try record(of: credential)
            out.append(VaultRecord(id: record.id, kind: .tombstone, version: record.version + 1))
        }
        return out
    }

    private func biometryKey(for credential: Credential, _ verification: BiometricSensor.Unlock?) throws(VaultError) -> SecureBytes {
        guard let verification else {
            // The authenticator verifies before it asks for such a key; reaching here without the
            // proof is a caller's mistake, refused rather than worked around.
            throw VaultError(.invalid, "passkey \(Base64URL.encode(credential.id)) needs user verification to be used")
        }
        return verification.biometryKey
    }

    private func recordsOf(rpId: String) -> [VaultRecord] {
        vault.records(kind: .credential, field: CredentialRecord.Tag.rpId, equals: Array(rpId.utf8))
    }

    private func decode(_ records: [VaultRecord]) throws(VaultError) -> [Credential] {
        var out = [Credential]()
        for record in records {
            let credential = try CredentialRecord.credential(from: record)
            recordIds[credential.id] = record.id
            out.append(credential)
        }
        return out
    }

    /// The live record holding `credential`: remembered from decoding, else found through the RP index.
    private func record(of credential: Credential) throws(VaultError) -> VaultRecord {
        if let recordId = recordIds[credential.id], let record = vault.record(id: recordId) { return record }
        guard let record = recordsOf(rpId: credential.rpId).first(where: {
            $0.field(CredentialRecord.Tag.credentialId)?.elementsEqual(credential.id) ?? false
        }) else {
            throw VaultError(.invalid, "credential \(Base64URL.encode(credential.id)) is not in the vault")
        }
        return record
    }
}
