@_spi(ByteOrder) import ByteOrder
import KeyVault
import VirtualAuthenticator

/// A passkey revision as the fields of a vault `credential` record, both ways: ``encode(_:)``
/// writes a ``RevisionContent`` as a record's fields and ``decode(_:firstDevice:)`` reads it back,
/// with the defaults records from before devices, sync and algorithms read with. The only code
/// that knows the credential record's layout (tags in ``CredentialRecord/Tag``, documented in
/// docs/vault-format.md); ``CredentialRecord`` and ``Revision`` go through it. The passkey as an
/// export carries it (``transferPayload(_:privateKeyDER:)``, ``passkey(fromTransfer:)``) is here too.
enum CredentialCodec {
    typealias Tag = CredentialRecord.Tag

    /// Why a credential record's fields do not decode: the field and what is wrong with it.
    struct DecodingError: Error, Equatable, CustomStringConvertible {
        enum Problem: Equatable {
            /// A field the record must hold is absent.
            case missing
            /// A text field is not UTF-8.
            case notUTF8
            /// A fixed-size field has another size.
            case wrongSize(expected: Int, found: Int)
            /// A field's value is not one the field can hold (a key of another algorithm, a credProtect of 4).
            case invalid(String)
        }

        let tag: UInt8
        let problem: Problem

        var description: String {
            switch problem {
            case .missing: "a credential record lacks field \(tag)"
            case .notUTF8: "field \(tag) of a credential record is not UTF-8"
            case .wrongSize(let expected, let found): "field \(tag) of a credential record is \(found) bytes, not \(expected)"
            case .invalid(let what): "a credential record's \(what) (field \(tag))"
            }
        }
    }

    /// Encodes `content` as a credential record's fields. A removal holds only what names the
    /// passkey (tags 1–3) and the revision's own fields. Names are kept as a registration keeps them
    /// (64 bytes at most: ``PasskeyRules/storedName(_:)``), so an RP's megabyte user.name cannot
    /// make a record the store cannot hold.
    static func encode(_ content: RevisionContent) -> [UInt8: [UInt8]] {
        let credential = content.credential
        var fields: [UInt8: [UInt8]] = [
            Tag.credentialId: credential.id,
            Tag.rpId: Array(credential.rpId.utf8),
            Tag.userHandle: credential.userHandle,
            Tag.itemId: content.itemId,
            Tag.deviceId: content.deviceId,
            Tag.deviceName: Array(content.deviceName.utf8),
            Tag.changedAt: BigEndianBytes.of(content.changedAt.ms),
            Tag.changedOrder: BigEndianBytes.of(content.changedAt.order),
        ]
        if content.removed {
            fields[Tag.removed] = [1]
            return fields
        }
        fields[Tag.userName] = Array(PasskeyRules.storedName(credential.userName).utf8)
        fields[Tag.userDisplayName] = Array(PasskeyRules.storedName(credential.userDisplayName).utf8)
        fields[Tag.createdAt] = BigEndianBytes.of(credential.createdAt)
        fields[Tag.signCount] = BigEndianBytes.of(credential.signCount)
        fields[Tag.backupFlags] = [backupFlags(credential)]
        fields[Tag.publicKey] = credential.publicKey.storedForm
        fields[Tag.algorithm] = BigEndianBytes.of(Int32(credential.publicKey.algorithm.rawValue))
        fields[Tag.countsSignatures] = [credential.globalCounter ? 2 : credential.countsSignatures ? 1 : 0]
        fields[Tag.requiresUserVerification] = [credential.requiresUserVerification ? 1 : 0]
        fields[Tag.created] = content.created.bytes
        fields[Tag.sealedPrivateKey] = content.sealedKey
        fields[Tag.sealedInVault] = content.sealedInVault
        if !credential.profile.isEmpty { fields[Tag.profile] = Array(credential.profile.utf8) }
        if !credential.aaguid.isEmpty { fields[Tag.aaguid] = credential.aaguid }
        fields[Tag.credProtect] = credential.credProtect.map { [$0.rawValue] }
        fields[Tag.credBlob] = credential.credBlob
        fields[Tag.largeBlob] = credential.largeBlob
        if credential.hasLargeBlobKey { fields[Tag.largeBlobKey] = [1] }
        if credential.hidden { fields[Tag.hidden] = [1] }
        if !credential.discoverable { fields[Tag.notDiscoverable] = [1] }
        return fields
    }

    /// BE (bit 0); with a BS set by hand, BS (bit 1) and bit 2. Otherwise sync decides BS.
    static func backupFlags(_ credential: Credential) -> UInt8 {
        (credential.backupEligible ? 1 : 0) | (credential.backupStateFixed ? (credential.backupState ? 2 : 0) | 4 : 0)
    }

    /// Decodes a credential record. Records from before devices and sync lack the revision tags:
    /// they are `firstDevice`'s, made when the passkey was created, each its own item; records from
    /// before other algorithms hold no algorithm (ES256), from before tag 26 no creation instant.
    static func decode(_ whole: VaultRecord, firstDevice: (id: [UInt8], name: String)) throws(DecodingError) -> RevisionContent {
        // The record's fields found by one scan, not one for each of the thirty asked for: a
        // first sync decodes every revision of the account.
        let record = whole.fieldTable
        func field(_ tag: UInt8) throws(DecodingError) -> [UInt8] {
            guard let value = record.field(tag) else { throw DecodingError(tag: tag, problem: .missing) }
            return Array(value)
        }
        func text(_ tag: UInt8, default fallback: String? = nil) throws(DecodingError) -> String {
            guard let bytes = record.field(tag) else {
                if let fallback { return fallback }
                throw DecodingError(tag: tag, problem: .missing)
            }
            guard let s = String(validating: Array(bytes), as: UTF8.self) else { throw DecodingError(tag: tag, problem: .notUTF8) }
            return s
        }
        // A big-endian integer of `T`'s width, as the record's own readers check it.
        func integer<T: FixedWidthInteger>(_ tag: UInt8, _: T.Type, default fallback: T? = nil) throws(DecodingError) -> T {
            guard let bytes = record.field(tag) else {
                guard let fallback else { throw DecodingError(tag: tag, problem: .missing) }
                return fallback
            }
            guard bytes.count == MemoryLayout<T>.size else {
                throw DecodingError(tag: tag, problem: .wrongSize(expected: MemoryLayout<T>.size, found: bytes.count))
            }
            return BigEndianBytes.integer(bytes)
        }
        let u64 = UInt64.self, u32 = UInt32.self, i32 = Int32.self
        func flag(_ tag: UInt8) -> Bool { record.field(tag)?.elementsEqual([1]) ?? false }

        let itemId = record.field(Tag.itemId).map(Array.init) ?? whole.id
        let deviceId = record.field(Tag.deviceId).map(Array.init) ?? firstDevice.id
        let deviceName = try text(Tag.deviceName, default: firstDevice.name)
        let sealedInVault = record.field(Tag.sealedInVault).map(Array.init)
        let order = try integer(Tag.changedOrder, u64, default: 0)
        if flag(Tag.removed) {
            let credential = Credential(
                id: try field(Tag.credentialId), rpId: try text(Tag.rpId), userHandle: try field(Tag.userHandle),
                userName: "", userDisplayName: "", createdAt: 0, signCount: 0, backupEligible: false, backupState: false,
                publicKey: .ec2(x: [], y: []))  // a removal names no key
            return RevisionContent(credential: credential, itemId: itemId, deviceId: deviceId, deviceName: deviceName,
                                   changedAt: Instant(ms: try integer(Tag.changedAt, u64), order: order),
                                   removed: true, created: .zero, sealedKey: nil, sealedInVault: sealedInVault)
        }
        let createdAt = try integer(Tag.createdAt, u64)
        let changedAt = Instant(ms: try integer(Tag.changedAt, u64, default: Revision.milliseconds(ofSeconds: createdAt)), order: order)
        let created: Instant
        if let bytes = record.field(Tag.created) {
            guard let instant = Instant(bytes: bytes) else { throw DecodingError(tag: Tag.created, problem: .wrongSize(expected: 16, found: bytes.count)) }
            created = instant
        } else {
            created = Instant(ms: Revision.milliseconds(ofSeconds: createdAt), order: 0)
        }
        let sealedKey = try field(Tag.sealedPrivateKey)
        let flags = try field(Tag.backupFlags).first ?? 0
        let number = try integer(Tag.algorithm, i32, default: Int32(COSEAlgorithm.es256.rawValue))
        guard let algorithm = COSEAlgorithm(rawValue: Int(number)) else {
            throw DecodingError(tag: Tag.algorithm, problem: .invalid("algorithm \(number) is not one authctl knows"))
        }
        guard let publicKey = COSEKey(storedForm: try field(Tag.publicKey), algorithm: algorithm) else {
            throw DecodingError(tag: Tag.publicKey, problem: .invalid("public key is not one of its algorithm (\(number))"))
        }
        let counter = record.field(Tag.countsSignatures)?.first ?? 0
        var credential = Credential(
            id: try field(Tag.credentialId), rpId: try text(Tag.rpId), userHandle: try field(Tag.userHandle),
            userName: try text(Tag.userName), userDisplayName: try text(Tag.userDisplayName),
            createdAt: createdAt, signCount: try integer(Tag.signCount, u32),
            backupEligible: flags & 1 != 0, backupState: flags & 2 != 0, publicKey: publicKey,
            countsSignatures: counter != 0, requiresUserVerification: flag(Tag.requiresUserVerification))
        credential.backupStateFixed = flags & 4 != 0
        credential.globalCounter = counter == 2
        credential.profile = try text(Tag.profile, default: "")
        credential.aaguid = record.field(Tag.aaguid).map(Array.init) ?? []
        if let level = record.field(Tag.credProtect) {
            guard level.count == 1, let policy = credProtect(Int(level[level.startIndex])) else {
                throw DecodingError(tag: Tag.credProtect, problem: .invalid("credProtect level is not 1, 2 or 3"))
            }
            credential.credProtect = policy
        }
        credential.credBlob = record.field(Tag.credBlob).map(Array.init)
        credential.largeBlob = record.field(Tag.largeBlob).map(Array.init)
        credential.hasLargeBlobKey = flag(Tag.largeBlobKey)
        credential.hidden = flag(Tag.hidden)
        credential.discoverable = !flag(Tag.notDiscoverable)
        return RevisionContent(credential: credential, itemId: itemId, deviceId: deviceId, deviceName: deviceName, changedAt: changedAt,
                               removed: false, created: created, sealedKey: sealedKey, sealedInVault: sealedInVault)
    }
}

/// What one credential record holds: the passkey as the revision leaves it (for a removal, only
/// its id, RP ID and user handle) and the revision's own fields.
struct RevisionContent: Equatable {
    var credential: Credential
    /// The passkey's identity across revisions and devices.
    var itemId: [UInt8]
    /// The device that made the revision, and its name.
    var deviceId: [UInt8]
    var deviceName: String
    /// When it was made: milliseconds since the epoch, and the vault position it was written at.
    var changedAt: Instant
    var removed: Bool
    /// When the passkey was created (``Instant/zero`` for a removal).
    var created: Instant
    /// The private key, sealed (`nil` for a removal).
    var sealedKey: [UInt8]?
    /// The vault the key's biometry-key seal is bound to, when another vault of the account made it.
    var sealedInVault: [UInt8]?
}

// MARK: - The transfer form

/// A passkey as `credential export` writes it (a CBOR map inside the passphrase envelope,
/// docs/vault-format.md, "Exported passkeys"): the passkey's fields under numbers of their own,
/// its DER private key in place of a sealed one, no revision fields. Its numbering is not the
/// record's (an export made by an earlier authctl must still import), but its values are read
/// with the same rules as a record's.
extension CredentialCodec {
    /// The fields of an exported passkey.
    enum TransferField {
        static let id = 1, rpId = 2, userHandle = 3, userName = 4, userDisplayName = 5, createdAt = 6, signCount = 7
        static let backupEligible = 8, backupState = 9, privateKey = 10, countsSignatures = 11, requiresUserVerification = 12
        static let profile = 13, aaguid = 14, globalCounter = 15, backupStateFixed = 16
        static let credProtect = 17, credBlob = 18, largeBlob = 19, largeBlobKey = 20
    }

    /// Why an export's payload is not a passkey authctl can use.
    struct TransferError: Error { let reason: String }

    /// The payload of an export of `credential`, whose private key is `privateKeyDER`.
    static func transferPayload(_ credential: Credential, privateKeyDER: [UInt8]) -> CBORValue {
        typealias F = TransferField
        return .map([
            (.int(F.id), .bytes(credential.id)), (.int(F.rpId), .text(credential.rpId)),
            (.int(F.userHandle), .bytes(credential.userHandle)), (.int(F.userName), .text(credential.userName)),
            (.int(F.userDisplayName), .text(credential.userDisplayName)), (.int(F.createdAt), .int(Int(credential.createdAt))),
            (.int(F.signCount), .int(Int(credential.signCount))), (.int(F.backupEligible), .bool(credential.backupEligible)),
            (.int(F.backupState), .bool(credential.backupState)), (.int(F.privateKey), .bytes(privateKeyDER)),
            (.int(F.countsSignatures), .bool(credential.countsSignatures)),
            (.int(F.requiresUserVerification), .bool(credential.requiresUserVerification)),
            (.int(F.profile), .text(credential.profile)), (.int(F.aaguid), .bytes(credential.aaguid)),
            (.int(F.globalCounter), .bool(credential.globalCounter)), (.int(F.backupStateFixed), .bool(credential.backupStateFixed)),
        ] + (credential.hasLargeBlobKey ? [(.int(F.largeBlobKey), .bool(true))] : [])
          + (credential.credProtect.map { [(.int(F.credProtect), .int(Int($0.rawValue)))] } ?? [])
          + (credential.credBlob.map { [(.int(F.credBlob), .bytes($0))] } ?? [])
          + (credential.largeBlob.map { [(.int(F.largeBlob), .bytes($0))] } ?? []))
    }

    /// The passkey an export's payload describes, read field by field: a duplicate or mistyped
    /// field, a missing one, a key that is not a sound key pair, a counter with no value left are
    /// refused here; what a registration could not have made (``PasskeyRules``) by the caller.
    /// Names longer than a registration keeps are kept as it would keep them (64 bytes).
    static func passkey(fromTransfer map: CBORValue) throws(TransferError) -> (Credential, PrivateKey) {
        guard case .map(let pairs) = map else { throw TransferError(reason: "its contents are not a map") }
        guard Set(pairs.map { $0.0.intValue ?? Int.min }).count == pairs.count, pairs.allSatisfy({ $0.0.intValue != nil }) else {
            throw TransferError(reason: "its fields are repeated or not numbered")
        }
        typealias F = TransferField
        func field(_ key: Int) -> CBORValue? { map[.int(key)] }
        func flag(_ key: Int) throws(TransferError) -> Bool {
            guard let value = field(key) else { return false }
            guard let bool = value.boolValue else { throw TransferError(reason: "field \(key) is not a boolean") }
            return bool
        }
        guard let id = field(F.id)?.bytesValue else { throw TransferError(reason: "the credential id is missing") }
        guard let rpId = field(F.rpId)?.textValue else { throw TransferError(reason: "the RP ID is missing") }
        guard let userHandle = field(F.userHandle)?.bytesValue else { throw TransferError(reason: "the user handle is missing") }
        guard let userName = field(F.userName)?.textValue, let displayName = field(F.userDisplayName)?.textValue else {
            throw TransferError(reason: "the user name or display name is missing")
        }
        guard let createdAt = field(F.createdAt)?.intValue, createdAt >= 0, UInt64(createdAt) <= WallClock.latest / 1000 else {
            throw TransferError(reason: "the creation time is missing or out of range")
        }
        guard let signCount = field(F.signCount)?.intValue, let count = UInt32(exactly: signCount) else {
            throw TransferError(reason: "the sign count is missing or out of range")
        }
        guard let der = field(F.privateKey)?.bytesValue else { throw TransferError(reason: "the private key is missing") }
        let key: PrivateKey
        do {
            key = try der.withUnsafeBytes { buffer throws(OpenSSLFailure) in try PrivateKey.load(der: buffer) }
            try key.validate()
        } catch { throw TransferError(reason: "its private key: \(error)") }
        let profileName = field(F.profile)?.textValue ?? ""
        guard field(F.profile) == nil || field(F.profile)?.textValue != nil else { throw TransferError(reason: "the profile is not text") }
        guard field(F.aaguid) == nil || field(F.aaguid)?.bytesValue != nil else { throw TransferError(reason: "the AAGUID is not bytes") }
        let aaguid = field(F.aaguid)?.bytesValue ?? []
        let counts = try flag(F.countsSignatures), global = try flag(F.globalCounter)
        guard !counts || count < UInt32.max else { throw TransferError(reason: "its signature counter has no value left") }
        let eligible = try flag(F.backupEligible), state = try flag(F.backupState)
        var credential = Credential(
            id: id, rpId: rpId, userHandle: userHandle, userName: PasskeyRules.storedName(userName),
            userDisplayName: PasskeyRules.storedName(displayName),
            createdAt: UInt64(createdAt), signCount: count, backupEligible: eligible, backupState: state,
            publicKey: key.publicKey, countsSignatures: counts || global, requiresUserVerification: try flag(F.requiresUserVerification))
        credential.profile = profileName
        credential.aaguid = aaguid
        credential.globalCounter = global
        credential.backupStateFixed = try flag(F.backupStateFixed)
        credential.hasLargeBlobKey = try flag(F.largeBlobKey)
        if let level = field(F.credProtect) {
            guard let policy = level.intValue.flatMap(credProtect) else { throw TransferError(reason: "the credProtect level is not 1, 2 or 3") }
            credential.credProtect = policy
        }
        if let blob = field(F.credBlob) {
            guard let bytes = blob.bytesValue else { throw TransferError(reason: "the credBlob is not bytes") }
            credential.credBlob = bytes
        }
        if let blob = field(F.largeBlob) {
            guard let bytes = blob.bytesValue else { throw TransferError(reason: "the large blob is not bytes") }
            credential.largeBlob = bytes
        }
        return (credential, key)
    }

    /// A credProtect level as either form holds it: 1, 2 or 3 (CTAP 2.1 §12.1).
    static func credProtect(_ number: Int) -> CredentialProtectionPolicy? {
        UInt8(exactly: number).flatMap(CredentialProtectionPolicy.init(rawValue:))
    }
}
