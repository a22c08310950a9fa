import KeyVault
import VirtualAuthenticator

/// Moving one passkey between vaults, as WebDriver's virtual authenticators get and add
/// credentials: `exportPasskey` seals it — private key included — under a passphrase of its own
/// (``PassphraseEnvelope``); `importPasskey` adds it to this device as the same credential (same
/// id, same key pair), which then syncs like one made here. A passkey made with user
/// verification is opened and sealed again only after the user is verified.
extension Device {
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
        var payload = CredentialCodec.transferPayload(credential, privateKeyDER: Array(der.prefix(length))).encoded()
        let secret = SecureBytes(consuming: &payload)
        do { return try PassphraseEnvelope.seal(secret, passphrase: passphrase, kdf: kdf) } catch { throw DeviceError(error) }
    }

    /// A passkey's private key as PKCS #8, as WebDriver's Get Credentials hands it out (WebAuthn
    /// L3 §11.8); `person` verifies first when it was made with user verification.
    public func privateKeyPKCS8(credentialId id: [UInt8], user policy: UserPolicy = UserPolicy()) throws(DeviceError) -> [UInt8] {
        guard let credential = try credential(id: id) else { throw DeviceError.noPasskey(id, on: name) }
        let store = try store()
        let verification = credential.requiresUserVerification
            ? try verify(policy, UserPrompt(ceremony: .authentication, rpId: credential.rpId, userName: credential.userName)) : nil
        let key: PrivateKey
        do { key = try store.privateKey(for: credential, verification: verification) } catch { throw DeviceError(error) }
        do { return try key.pkcs8DER() } catch {
            throw DeviceError(.authenticator(.unknown), "OpenSSL could not encode the private key: \(error)")
        }
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
        return try adopt(map, what: "the exported passkey", user: policy)
    }

    /// Adds a passkey made elsewhere from its private key, as WebDriver's Add Credential (WebAuthn
    /// L3 §11.7) does: the same checks as an import (a sound key pair, a well-formed RP ID that is
    /// not a public suffix, names as a registration keeps them), the same refusal of a credential
    /// id already here, and the same replacement of the RP's passkey for the same user handle.
    @discardableResult
    public func addPasskey(_ added: AddedPasskey) throws(DeviceError) -> Credential {
        typealias F = CredentialCodec.TransferField
        // An asymmetric key package per RFC 5958 (PKCS #8), as §11.7 takes it: the RFC 5915 or
        // PKCS #1 layouts an export reads too are another format, refused as the spec refuses them.
        guard PrivateKey.isPKCS8(der: added.privateKeyDER) else {
            throw DeviceError(.invalidArgument, "the added credential's private key is not a PKCS #8 key package (RFC 5958): "
                              + "an RFC 5915 EC key or a PKCS #1 RSA key is written as PKCS #8 first (openssl pkcs8 -topk8 -nocrypt)")
        }
        var pairs: [(CBORValue, CBORValue)] = [
            (.int(F.id), .bytes(added.id)), (.int(F.rpId), .text(added.rpId)), (.int(F.userHandle), .bytes(added.userHandle)),
            (.int(F.userName), .text(added.userName)), (.int(F.userDisplayName), .text(added.userDisplayName)),
            (.int(F.createdAt), .int(Int(account.now / 1000))), (.int(F.signCount), .int(0)),
            (.int(F.backupEligible), .bool(added.backupEligible)), (.int(F.backupState), .bool(added.backupState)),
            (.int(F.privateKey), .bytes(added.privateKeyDER)), (.int(F.countsSignatures), .bool(added.countsSignatures)),
            (.int(F.backupStateFixed), .bool(added.backupStateFixed)),
        ]
        if let blob = added.largeBlob {
            // Stored as a write would store it: sealed under the passkey's largeBlobKey.
            let sealed: [UInt8]
            do {
                let key = try added.privateKeyDER.withUnsafeBytes { buffer throws(OpenSSLFailure) in try PrivateKey.load(der: buffer) }
                sealed = try LargeBlob.seal(blob, key: key, nonce: account.random.bytes(12))
            } catch { throw DeviceError(.invalidArgument, "the added credential is not one authctl can use: its private key: \(error)") }
            pairs.append((.int(F.largeBlob), .bytes(sealed)))
        }
        // The count is set after the payload's checks: WebDriver's range reaches 4294967295
        // (WebAuthn L3 §11, Add Credential), which an export's payload may not carry (no value left to count to).
        return try adopt(.map(pairs), what: "the added credential", user: UserPolicy(), signCount: added.countsSignatures ? added.signCount : 0)
    }

    /// Adds the passkey an export's payload describes (``CredentialCodec/passkey(fromTransfer:)``).
    private func adopt(_ map: CBORValue, what: String, user policy: UserPolicy, signCount: UInt32? = nil) throws(DeviceError) -> Credential {
        var credential: Credential
        let key: PrivateKey
        do throws(CredentialCodec.TransferError) {
            (credential, key) = try CredentialCodec.passkey(fromTransfer: map)
            // Every field as a registration would have made it (PasskeyRules), and the RP ID against
            // the same Public Suffix List a registration's rp.id is checked against.
            var problems = PasskeyRules.problems(of: credential, key: key)
            if RelyingPartyIdentifier.isWellFormed(credential.rpId) && !PasskeyRules.isImportable(credential.rpId, suffixes: account.suffixes()) {
                problems.append("the RP ID '\(credential.rpId)' is a public suffix, which an imported passkey cannot claim")
            }
            guard problems.isEmpty else { throw CredentialCodec.TransferError(reason: problems.joined(separator: "; ")) }
            // Made now at the latest: a day's leeway for another machine's clock.
            guard credential.createdAt <= account.now / 1000 + 86_400 else {
                throw CredentialCodec.TransferError(reason: "it was created after the device's clock (\(credential.createdAt) s)")
            }
        } catch {
            throw DeviceError(.invalidArgument, "\(what) is not one authctl can use: \(error.reason)")
        }
        if let signCount { credential.signCount = signCount }
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

/// A passkey made elsewhere, as WebDriver's Add Credential describes it (WebAuthn L3 §11.7):
/// its id, RP, user handle, private key (PKCS #8), counter and backup flags.
public struct AddedPasskey: Sendable {
    public var id: [UInt8]
    public var rpId: String
    public var userHandle: [UInt8]
    public var userName: String
    public var userDisplayName: String
    public var privateKeyDER: [UInt8]
    public var signCount: UInt32
    /// Whether it has a signature counter, starting at ``signCount``; without one (WebDriver's
    /// `signCount: null`, WebAuthn L3 §11) every assertion reports 0 and ``signCount`` is not kept.
    public var countsSignatures: Bool
    public var backupEligible: Bool
    public var backupState: Bool
    /// BS stays as given, whatever sync does (as WebDriver's explicit `backupState` holds).
    public var backupStateFixed: Bool
    /// Its large blob (at most 4,096 bytes), when it has one.
    public var largeBlob: [UInt8]?

    public init(id: [UInt8], rpId: String, userHandle: [UInt8], userName: String = "", userDisplayName: String = "",
                privateKeyDER: [UInt8], signCount: UInt32 = 0, countsSignatures: Bool = true, backupEligible: Bool = true,
                backupState: Bool = true, backupStateFixed: Bool = false, largeBlob: [UInt8]? = nil) {
        self.countsSignatures = countsSignatures
        self.backupStateFixed = backupStateFixed
        self.id = id
        self.rpId = rpId
        self.userHandle = userHandle
        self.userName = userName
        self.userDisplayName = userDisplayName
        self.privateKeyDER = privateKeyDER
        self.signCount = signCount
        self.backupEligible = backupEligible
        self.backupState = backupState
        self.largeBlob = largeBlob
    }
}
