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
        static let profile = 13, aaguid = 14
    }

    public func exportPasskey(credentialId id: [UInt8], passphrase: SecureBytes, kdf: KDFLevel = .interactive,
                              user policy: UserPolicy = UserPolicy()) throws(DeviceError) -> [UInt8] {
        guard let credential = try credential(id: id) else {
            throw DeviceError(.noSuchCredential, "no passkey with id \(Base64URL.encode(id)) on device '\(name)'")
        }
        let store = try store()
        let verification = credential.requiresUserVerification
            ? try verify(policy, UserPrompt(ceremony: .authentication, rpId: credential.rpId, userName: credential.userName)) : nil
        let key: PrivateKey
        do { key = try store.privateKey(for: credential, verification: verification) } catch { throw DeviceError(error) }
        var der = [UInt8](repeating: 0, count: key.privateKeyDERCount)
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
        ]).encoded()
        let secret = SecureBytes(consuming: &payload)
        for i in der.indices { der[i] = 0 }
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
        typealias F = TransferField
        func field(_ key: Int) -> CBORValue? { map[.int(key)] }
        guard let id = field(F.id)?.bytesValue, (16...1023).contains(id.count), let rpId = field(F.rpId)?.textValue,
              let userHandle = field(F.userHandle)?.bytesValue, (1...64).contains(userHandle.count),
              let userName = field(F.userName)?.textValue, let displayName = field(F.userDisplayName)?.textValue,
              let createdAt = field(F.createdAt)?.intValue, createdAt >= 0, let signCount = field(F.signCount)?.intValue,
              let count = UInt32(exactly: signCount), let der = field(F.privateKey)?.bytesValue
        else { throw DeviceError(.invalidArgument, "the exported passkey lacks a field or has one out of range") }
        let key: PrivateKey
        do { key = try der.withUnsafeBytes { buffer throws(OpenSSLFailure) in try PrivateKey.load(der: buffer) } } catch {
            throw DeviceError(.invalidArgument, "the exported passkey's private key is not one authctl uses")
        }
        guard try self.credential(id: id) == nil else {
            throw DeviceError(.invalidArgument, "device '\(name)' already holds the passkey \(Base64URL.encode(id))")
        }
        let eligible = field(F.backupEligible)?.boolValue ?? false
        var credential = Credential(
            id: id, rpId: rpId, userHandle: userHandle, userName: userName, userDisplayName: displayName,
            createdAt: UInt64(createdAt), signCount: count, backupEligible: eligible,
            backupState: eligible && (field(F.backupState)?.boolValue ?? false), publicKey: key.publicKey,
            countsSignatures: field(F.countsSignatures)?.boolValue ?? false,
            requiresUserVerification: field(F.requiresUserVerification)?.boolValue ?? false)
        credential.profile = field(F.profile)?.textValue ?? ""
        credential.aaguid = field(F.aaguid)?.bytesValue ?? []
        let store = try store()
        let verification = credential.requiresUserVerification
            ? try verify(policy, UserPrompt(ceremony: .registration, rpId: rpId, userName: userName)) : nil
        do {
            let replaced = try store.credentials(forRP: rpId).filter { $0.userHandle == userHandle }
            try store.save(credential, privateKey: key, replacing: replaced, verification: verification)
        } catch { throw DeviceError(error) }
        return credential
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
