import KeyVault
import VirtualAuthenticator

/// Moving one passkey between vaults, as WebDriver's virtual authenticators get and add
/// credentials: `exportPasskey` seals it — private key included — under a passphrase of its own
/// (``PassphraseEnvelope``); `importPasskey` adds it to this device as the same credential (same
/// id, same key pair), which then syncs like one made here. A passkey made with user
/// verification is opened and sealed again only after the user is verified.
extension Device {
    /// The fields of an exported passkey (a CBOR map inside the envelope).
    enum TransferField {
        static let id = 1, rpId = 2, userHandle = 3, userName = 4, userDisplayName = 5, createdAt = 6, signCount = 7
        static let backupEligible = 8, backupState = 9, privateKey = 10, countsSignatures = 11, requiresUserVerification = 12
        static let profile = 13, aaguid = 14, globalCounter = 15, backupStateFixed = 16
        static let credProtect = 17, credBlob = 18, largeBlob = 19
    }

    public func exportPasskey(credentialId id: [UInt8], passphrase: SecureBytes, kdf: KDFLevel = .interactive,
                              user policy: UserPolicy = UserPolicy()) throws(DeviceError) -> [UInt8] {
        guard let credential = try credential(id: id) else {
            throw DeviceError.noPasskey(id, on: name)
        }
        let store = try store()
        let verification = credential.requiresUserVerification
            ? try verify(policy, UserPrompt(ceremony: .authentication, rpId: credential.rpId, userName: credential.userName)) : nil
        let key: PrivateKey
        do { key = try store.privateKey(for: credential, verification: verification) } catch { throw DeviceError(error) }
        var der = [UInt8](repeating: 0, count: key.privateKeyDERCount)
        defer { for i in der.indices { der[i] = 0 } }  // on every way out, errors included
        let length: Int
        do { length = try der.withUnsafeMutableBytes { buffer throws(OpenSSLFailure) in try key.writePrivateKeyDER(into: buffer) } } catch {
            throw DeviceError(.authenticator(.unknown), "OpenSSL could not encode the private key: \(error)")
        }
        typealias F = TransferField
        var payload = CBORValue.map([
            (.int(F.id), .bytes(credential.id)), (.int(F.rpId), .text(credential.rpId)),
            (.int(F.userHandle), .bytes(credential.userHandle)), (.int(F.userName), .text(credential.userName)),
            (.int(F.userDisplayName), .text(credential.userDisplayName)), (.int(F.createdAt), .int(Int(credential.createdAt))),
            (.int(F.signCount), .int(Int(credential.signCount))), (.int(F.backupEligible), .bool(credential.backupEligible)),
            (.int(F.backupState), .bool(credential.backupState)), (.int(F.privateKey), .bytes(Array(der.prefix(length)))),
            (.int(F.countsSignatures), .bool(credential.countsSignatures)),
            (.int(F.requiresUserVerification), .bool(credential.requiresUserVerification)),
            (.int(F.profile), .text(credential.profile)), (.int(F.aaguid), .bytes(credential.aaguid)),
            (.int(F.globalCounter), .bool(credential.globalCounter)), (.int(F.backupStateFixed), .bool(credential.backupStateFixed)),
        ] + (credential.credProtect.map { [(.int(F.credProtect), .int(Int($0.rawValue)))] } ?? [])
          + (credential.credBlob.map { [(.int(F.credBlob), .bytes($0))] } ?? [])
          + (credential.largeBlob.map { [(.int(F.largeBlob), .bytes($0))] } ?? [])).encoded()
        let secret = SecureBytes(consuming: &payload)
        do { return try PassphraseEnvelope.seal(secret, passphrase: passphrase, kdf: kdf) } catch { throw DeviceError(error) }
    }

    /// Adds the passkey in `envelope` to this device. The same credential id already here is
    /// refused; another passkey of the same RP and user handle is replaced (as a registration
    /// replaces it).
    @discardableResult
    public func importPasskey(_ envelope: [UInt8], passphrase: SecureBytes, user policy: UserPolicy = UserPolicy()) throws(DeviceError) -> Credential {
        let plain: SecureBytes
        do { plain = try PassphraseEnvelope.open(envelope, passphrase: passphrase) } catch { throw DeviceError(error) }
        let map: CBORValue
        do { map = try plain.withUnsafeBytes { buffer throws(CBORValue.DecodingError) in try CBORValue.decode(Array(buffer)) } } catch {
            throw DeviceError(.invalidArgument, "the exported passkey's contents are malformed")
        }
        let credential: Credential
        let key: PrivateKey
        do throws(TransferError) {
            (credential, key) = try Self.passkey(from: map)
            // Every field as a registration would have made it (PasskeyRules), and the RP ID against
            // the same Public Suffix List a registration's rp.id is checked against.
            var problems = PasskeyRules.problems(of: credential, key: key)
            if RelyingPartyIdentifier.isWellFormed(credential.rpId) && !PasskeyRules.isImportable(credential.rpId, suffixes: account.suffixes()) {
                problems.append("the RP ID '\(credential.rpId)' is a public suffix, which an imported passkey cannot claim")
            }
            guard problems.isEmpty else { throw TransferError(reason: problems.joined(separator: "; ")) }
            // Made now at the latest: a day's leeway for another machine's clock.
            guard credential.createdAt <= account.now / 1000 + 86_400 else {
                throw TransferError(reason: "it was created after the device's clock (\(credential.createdAt) s)")
            }
        } catch {
            throw DeviceError(.invalidArgument, "the exported passkey is not one authctl can use: \(error.reason)")
        }
        guard try self.credential(id: credential.id) == nil else {
            throw DeviceError(.invalidArgument, "device '\(name)' already holds the passkey \(Base64URL.encode(credential.id))")
        }
        let rpId = credential.rpId, userName = credential.userName, userHandle = credential.userHandle
        let store = try store()
        let verification = credential.requiresUserVerification
            ? try verify(policy, UserPrompt(ceremony: .registration, rpId: rpId, userName: userName)) : nil
        do {
            let replaced = try store.credentials(forRP: rpId, userHandle: userHandle)
            try store.save(credential, privateKey: key, replacing: replaced, verification: verification)
        } catch { throw DeviceError(error) }
        return credential
    }

    struct TransferError: Error { let reason: String }

    /// The passkey an export's payload describes, read field by field: a duplicate or mistyped
    /// field, a missing one, a key that is not a sound key pair, a counter with no value left are
    /// refused here; what a registration could not have made (``PasskeyRules``) by the caller.
    /// Names longer than a registration keeps are kept as it would keep them (64 bytes).
    static func passkey(from map: CBORValue) throws(TransferError) -> (Credential, PrivateKey) {
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
        if let level = field(F.credProtect) {
            guard let number = level.intValue, let policy = UInt8(exactly: number).flatMap(CredentialProtectionPolicy.init(rawValue:)) else {
                throw TransferError(reason: "the credProtect level is not 1, 2 or 3")
            }
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

    /// The user verified on this device's sensor, as `policy` answers: the proof a passkey made
    /// with user verification is opened or sealed with.
    private func verify(_ policy: UserPolicy, _ prompt: UserPrompt) throws(DeviceError) -> BiometricSensor.Unlock {
        let user = SimulatedUser(sensor: BiometricSensor(account: account, deviceId: id), policy: policy)
        do {
            try user.confirmPresence(prompt)
            return try user.verifyUser(prompt)
        } catch { throw DeviceError(error) }
    }
}
