@_spi(ByteOrder) import ByteOrder
import KeyVault
import VirtualAuthenticator

/// CTAP1/U2F registration and authentication on a device answering as a security key (FIDO U2F
/// Raw Message Formats): what a U2F client (a browser's `appid`, pam_u2f, libfido2's U2F path)
/// drives. A U2F request names its RP by the application parameter alone, SHA-256 of an AppID
/// the key never sees, so a U2F credential is kept under an RP ID made of that hash
/// (``u2fRelyingParty(_:)``); a credential made over CTAP2 answers U2F too when the application
/// parameter is its RP ID's hash, as a real key's does.
extension Device {
    /// The RP ID a U2F credential is kept under: its application parameter in hex, as two
    /// 32-digit labels under `u2f.invalid` (a name no RP can have).
    public static func u2fRelyingParty(_ application: [UInt8]) -> String {
        let hex = application.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        return hex.prefix(32) + "." + hex.dropFirst(32) + ".u2f.invalid"
    }

    /// U2F_REGISTER: a new P-256 key pair, kept not discoverable with a 64-byte key handle, and the
    /// registration the key's model attests (its U2F batch certificate over 0x00 ‖ application ‖
    /// challenge ‖ key handle ‖ public key).
    public func keyU2FRegister(application: [UInt8], challenge: [UInt8]) throws(DeviceError) -> KeyU2FRegistration {
        let record = try record()
        try Self.requireSupport(record)
        let (profile, _) = try account.profile(of: record)
        let key: PrivateKey
        do { key = try PrivateKey.generate(.es256) } catch { throw DeviceError(.authenticator(.unknown), "OpenSSL: \(error)") }
        let id = account.random.bytes(profile.wrappedCredentialIdLength ?? 64)
        var credential = Credential(id: id, rpId: Self.u2fRelyingParty(application), userHandle: [0], userName: "", userDisplayName: "",
                                    createdAt: account.clock.seconds, signCount: 0, backupEligible: false, backupState: false,
                                    publicKey: key.publicKey, countsSignatures: true)
        credential.profile = profile.name
        credential.globalCounter = true
        credential.aaguid = [UInt8](repeating: 0, count: 16)
        credential.discoverable = false
        var data = AuthenticatorData(rpId: credential.rpId, flags: [.userPresent], signCount: 0,
                                     attestedCredentialData: AttestedCredentialData(aaguid: credential.aaguid, credentialId: id, publicKey: key.publicKey))
        data.rpIdHash = application
        let ca = try account.attestationCA()
        let input = AttestationStatementInput(
            authenticatorData: data.bytes, clientDataHash: challenge, credentialAlgorithm: COSEAlgorithm.es256.rawValue,
            credentialPublicKey: key.subjectPublicKeyInfo, signWithCredentialKey: { message throws(OpenSSLFailure) in try key.sign(message) },
            aaguid: credential.aaguid, ca: ca,
            certificateSubject: .authenticatorAttestation(country: "US", organization: profile.vendor,
                                                          commonName: "\(profile.vendor) \(profile.name) attestation"),
            certificateValidity: AttestationCA.validity)
        let statement: CBORValue
        do { statement = try FIDOU2FAttestationStatement.build(input) } catch {
            throw DeviceError(.authenticator(.unknown), "could not make the U2F attestation: \(error)")
        }
        guard let signature = statement[.text("sig")]?.bytesValue, case .array(let chain)? = statement[.text("x5c")],
              let certificate = chain.first?.bytesValue else { throw DeviceError(.authenticator(.unknown), "the U2F attestation has no signature or certificate") }
        let store = ViewCredentialStore(account: account, device: record, nextRevisionId: account.reserveRevisionId())
        do { try store.save(credential, privateKey: key, replacing: [], verification: nil) } catch { throw DeviceError(error) }
        return KeyU2FRegistration(publicKey: key.publicKey.storedForm, keyHandle: id, certificate: certificate, signature: signature)
    }

    /// The credential with key handle `keyHandle` the key holds for `application` (`nil`: none —
    /// SW_WRONG_DATA).
    private func u2fCredential(application: [UInt8], keyHandle: [UInt8]) throws(DeviceError) -> Credential? {
        guard !keyHandle.isEmpty else { return nil }
        let (profile, _) = try account.profile(of: try record())
        guard let credential = try credential(id: keyHandle), keyHolds(credential, profile: profile),
              credential.publicKey.algorithm == .es256, !credential.requiresUserVerification,
              credential.rpId == Self.u2fRelyingParty(application) || SHA256.hash(Array(credential.rpId.utf8)) == application else { return nil }
        return credential
    }

    /// Whether the key holds `keyHandle` for `application` (U2F_AUTHENTICATE's check-only).
    public func keyU2FHolds(application: [UInt8], keyHandle: [UInt8]) throws(DeviceError) -> Bool {
        try u2fCredential(application: application, keyHandle: keyHandle) != nil
    }

    /// U2F_AUTHENTICATE: the response data — the flags (UP when `userPresent`), the key's next
    /// global count, the signature over application ‖ flags ‖ counter ‖ challenge; `nil` for a key
    /// handle it does not hold for `application`. The count is stored before the answer leaves.
    public func keyU2FAuthenticate(application: [UInt8], challenge: [UInt8], keyHandle: [UInt8],
                                   userPresent: Bool) throws(DeviceError) -> [UInt8]? {
        guard let credential = try u2fCredential(application: application, keyHandle: keyHandle) else { return nil }
        let store = ViewCredentialStore(account: account, device: try record(), nextRevisionId: nil)
        do throws(AuthenticatorError) {
            let previous = credential.globalCounter ? max(try store.globalSignCount(), credential.signCount) : credential.signCount
            // WebAuthn L3 §6.1.1: no count above 4294967295 exists, and a wrap to 0 reads as a clone.
            guard previous < UInt32.max else {
                throw AuthenticatorError(.notHandled, "the key's signature counter is at 4294967295: it can sign no more")
            }
            let counter = previous + 1
            let flags: UInt8 = userPresent ? 0x01 : 0x00
            let key = try store.privateKey(for: credential, verification: nil)
            let signature: [UInt8]
            let counted = [flags] + BigEndianBytes.of(counter)
            do { signature = try key.sign(application + counted + challenge) } catch {
                throw AuthenticatorError(.unknown, "OpenSSL: \(error)")
            }
            try store.updateSignCount(of: credential, to: counter)
            return counted + signature
        } catch { throw DeviceError(error) }
    }
}

/// A U2F registration's parts (FIDO U2F Raw Message Formats §4.3): the user public key (65 bytes,
/// uncompressed), the key handle, the attestation certificate (DER) and the batch signature.
public struct KeyU2FRegistration: Sendable {
    public let publicKey: [UInt8]
    public let keyHandle: [UInt8]
    public let certificate: [UInt8]
    public let signature: [UInt8]

    /// The response data: 0x05 ‖ public key ‖ L ‖ key handle ‖ certificate ‖ signature.
    public var bytes: [UInt8] { [0x05] + publicKey + [UInt8(keyHandle.count)] + keyHandle + certificate + signature }
}
