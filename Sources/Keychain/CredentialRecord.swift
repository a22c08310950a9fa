import KeyVault
import VirtualAuthenticator

/// A passkey as a vault `credential` record: the field tags (documented in docs/vault-format.md)
/// and the conversions both ways. The private key is a sealed secret in its own field.
enum CredentialRecord {
    enum Tag {
        static let credentialId: UInt8 = 1, rpId: UInt8 = 2, userHandle: UInt8 = 3, userName: UInt8 = 4
        static let userDisplayName: UInt8 = 5, createdAt: UInt8 = 6, signCount: UInt8 = 7
        static let backupFlags: UInt8 = 8, publicPoint: UInt8 = 9, sealedPrivateKey: UInt8 = 10
        static let algorithm: UInt8 = 11, countsSignatures: UInt8 = 12, requiresUserVerification: UInt8 = 13
    }

    static func make(id recordId: [UInt8], for credential: Credential, sealedKey: [UInt8]) -> VaultRecord {
        var record = VaultRecord(id: recordId, kind: .credential, fields: [
            Tag.credentialId: credential.id,
            Tag.rpId: Array(credential.rpId.utf8),
            Tag.userHandle: credential.userHandle,
            Tag.userName: Array(credential.userName.utf8),
            Tag.userDisplayName: Array(credential.userDisplayName.utf8),
            Tag.backupFlags: [(credential.backupEligible ? 1 : 0) | (credential.backupState ? 2 : 0)],
            Tag.publicPoint: credential.publicPoint,
            Tag.sealedPrivateKey: sealedKey,
            Tag.countsSignatures: [credential.countsSignatures ? 1 : 0],
            Tag.requiresUserVerification: [credential.requiresUserVerification ? 1 : 0],
        ])
        record.setInteger(Tag.createdAt, credential.createdAt)
        record.setInteger(Tag.signCount, credential.signCount)
        record.setInteger(Tag.algorithm, Int32(COSEKey.es256))
        return record
    }

    static func credential(from record: VaultRecord) throws(VaultError) -> Credential {
        func field(_ tag: UInt8) throws(VaultError) -> [UInt8] {
            guard let value = record.field(tag) else { throw VaultError(.corrupted, "a credential record lacks field \(tag)") }
            return Array(value)
        }
        func text(_ tag: UInt8) throws(VaultError) -> String {
            guard let s = String(validating: try field(tag), as: UTF8.self) else {
                throw VaultError(.corrupted, "field \(tag) of a credential record is not UTF-8")
            }
            return s
        }
        func integer<T: FixedWidthInteger>(_ tag: UInt8, _ type: T.Type) throws(VaultError) -> T {
            guard let value = try record.integer(tag, as: type) else { throw VaultError(.corrupted, "a credential record lacks field \(tag)") }
            return value
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
