/// authenticatorMakeCredential (CTAP 2.1 §6.1), as a platform authenticator performs it.
package struct MakeCredentialRequest: Sendable {
    package var clientDataHash: [UInt8]
    package var rpId: String
    package var userHandle: [UInt8]
    package var userName: String
    package var userDisplayName: String
    /// COSE algorithm identifiers in the RP's order of preference.
    package var algorithms: [Int]
    package var excludeList: [[UInt8]]
    /// Whether to perform user verification (the client decided from `userVerification`).
    package var performUserVerification: Bool
    /// What the RP asked for; the authenticator's profile decides the format that answers it.
    package var attestation: AttestationConveyance
    /// Report a zero AAGUID (the client refused an enterprise attestation for this RP ID and
    /// asks for `none` attestation that names no authenticator model).
    package var zeroAAGUID: Bool
    package var timeoutMilliseconds: Int?
    package var fault: Fault?
    package var extensions: MakeCredentialExtensions
    /// Collect user presence (UP=1). A conditional create does not: it asks nothing (UP=0, UV=0).
    package var requireUserPresence = true
    /// Whether a credential made with user verification needs it again to be used: a platform
    /// passkey's key is sealed under the biometric; a security key's credential is not, and its
    /// credProtect policy alone says when verification is needed (CTAP 2.1 §12.1).
    package var verificationBindsKey = true
    /// A discoverable credential (`rk`), which replaces the RP's one of the same user; a security
    /// key's non-discoverable one replaces nothing and has the longer id of a wrapped key.
    package var discoverable = true

    package init(clientDataHash: [UInt8], rpId: String, userHandle: [UInt8], userName: String,
                userDisplayName: String, algorithms: [Int], excludeList: [[UInt8]],
                performUserVerification: Bool, attestation: AttestationConveyance,
                zeroAAGUID: Bool = false, timeoutMilliseconds: Int? = nil, fault: Fault? = nil,
                extensions: MakeCredentialExtensions = MakeCredentialExtensions()) {
        self.zeroAAGUID = zeroAAGUID
        self.clientDataHash = clientDataHash
        self.rpId = rpId
        self.userHandle = userHandle
        self.userName = userName
        self.userDisplayName = userDisplayName
        self.algorithms = algorithms
        self.excludeList = excludeList
        self.performUserVerification = performUserVerification
        self.attestation = attestation
        self.timeoutMilliseconds = timeoutMilliseconds
        self.fault = fault
        self.extensions = extensions
    }
}

public struct MakeCredentialResponse: Sendable {
    public let credential: Credential
    public let authenticatorData: [UInt8]
    public let attestationObject: AttestationObject
    public let publicKeySPKI: [UInt8]
    package var extensionOutputs = MakeCredentialExtensionOutputs()
    /// The new credential's largeBlobKey, when the request asked for one (CTAP 2.1 §12.3).
    public var largeBlobKey: [UInt8]? { extensionOutputs.largeBlobKey }
}

extension Authenticator {
    package func makeCredential(_ request: MakeCredentialRequest) throws(AuthenticatorError) -> MakeCredentialResponse {
        // Step 3: the first algorithm this model makes, in the RP's order (or the one it prefers).
        // None is CTAP2_ERR_UNSUPPORTED_ALGORITHM, which the browser reports as NotAllowedError; it
        // comes before the user is asked anything and before the excludeList (step 11).
        let profile = configuration.profile
        guard let algorithm = profile.algorithm(for: request.algorithms) else {
            throw AuthenticatorError(.notHandled, "no algorithm in pubKeyCredParams that profile \(profile.name) makes (it makes \(profile.algorithms.map(\.description).joined(separator: ", ")))")
        }
        let format = configuration.format(for: request.attestation)
        if format == .fidoU2F && algorithm != .es256 {
            throw AuthenticatorError(.notHandled, "fido-u2f attestation needs an ES256 (-7) credential; pubKeyCredParams does not offer it")
        }
        let prompt = UserPrompt(ceremony: .registration, rpId: request.rpId, userName: request.userName,
                                timeoutMilliseconds: request.timeoutMilliseconds)
        // What the exclude list names, and the passkeys of this user a new one replaces: looked
        // up, not scanned for, so a registration costs the same beside ten passkeys or thousands.
        let listed = try store.credentials(forRP: request.rpId, ids: request.excludeList)
        let sameUser = request.discoverable ? try store.credentials(forRP: request.rpId, userHandle: request.userHandle).filter(\.discoverable) : []
        try requireVerificationPossible(request.performUserVerification)
        try request.fault?.check(userVerified: request.performUserVerification)

        // The user consents (presence; `cancel` ends here), then built-in user verification when
        // the client asked for it (CTAP 2.1 §6.1.2 step 6, performBuiltInUv).
        if request.requireUserPresence { try user.confirmPresence(prompt) }
        let verification = request.performUserVerification ? try user.verifyUser(prompt) : nil

        // Step 11 (excludeList), after the user consented, so an RP cannot probe the keychain
        // silently. Only a passkey with credProtect userVerificationRequired is hidden from a
        // request that did not verify the user (CTAP 2.1 §6.1.2 step 11: "if the credential's
        // credProtect value is not userVerificationRequired" it is excluded whatever the "uv" bit;
        // otherwise only with it). A passkey made with user verification but without that policy
        // is excluded even on a `discouraged` request.
        if listed.contains(where: { credential in
            verification != nil || credential.isVisible(userVerified: false, listed: true)
        }) {
            throw AuthenticatorError(.matchedExcludedCredential,
                "a credential in excludeCredentials already exists for \(request.rpId); nothing was stored")
        }

        // Step 17: a fresh key pair and a random credential id.
        let key: PrivateKey
        do { key = try PrivateKey.generate(algorithm) } catch { throw AuthenticatorError(error) }
        let coseKey = key.publicKey
        var credential = Credential(
            id: random.bytes(request.discoverable ? configuration.credentialIdLength
                                 : profile.wrappedCredentialIdLength ?? configuration.credentialIdLength), rpId: request.rpId,
            userHandle: request.userHandle, userName: request.userName,
            userDisplayName: request.userDisplayName, createdAt: clock.seconds, signCount: 0,
            backupEligible: configuration.backupEligible, backupState: configuration.backupState,
            publicKey: coseKey, countsSignatures: configuration.signCounter != .zero,
            requiresUserVerification: request.performUserVerification && request.verificationBindsKey)
        credential.profile = profile.name
        credential.discoverable = request.discoverable
        credential.globalCounter = configuration.signCounter == .global
        credential.aaguid = format == .fidoU2F || request.zeroAAGUID ? Self.zeroAAGUID : configuration.aaguid
        let extensions = request.extensions
        credential.credProtect = extensions.credProtect
        var outputs = MakeCredentialExtensionOutputs()
        if let blob = extensions.credBlob {
            let fits = blob.count <= Self.maximumCredBlobLength
            if fits { credential.credBlob = blob }
            outputs.credBlob = fits
        }
        outputs.largeBlobSupported = extensions.largeBlobKey
        credential.hasLargeBlobKey = extensions.largeBlobKey
        if extensions.largeBlobKey {
            do { outputs.largeBlobKey = try LargeBlob.key(of: key) } catch { throw AuthenticatorError(error) }
        }
        if extensions.hmacSecret, let salts = extensions.hmacSecretSalts {
            do { outputs.hmacSecret = try HMACSecret.evaluate(salts, key: key, userVerified: true) }
            catch { throw AuthenticatorError(error) }
        }

        var flags: AuthenticatorFlags = []
        flags.set(.userPresent, request.requireUserPresence)
        flags.set(.userVerified, request.performUserVerification)
        flags.set(.backupEligible, credential.backupEligible)
        flags.set(.backupState, credential.backupState)
        var data = AuthenticatorData(
            rpId: request.rpId, flags: flags, signCount: credential.signCount,
            attestedCredentialData: AttestedCredentialData(
                aaguid: credential.aaguid, credentialId: credential.id, publicKey: coseKey),
            extensions: registrationExtensionMap(extensions, credential: credential, outputs: outputs))
        request.fault?.apply(to: &data, previousSignCount: 0)
        var authenticatorData = data.bytes

        // Step 19: the attestation statement.
        var attestation = try attestationObject(format, authenticatorData: authenticatorData,
                                                clientDataHash: request.clientDataHash, key: key)
        if let fault = request.fault {
            attestation = attestation.withFault(fault)
            authenticatorData = attestation.authenticatorData
        }

        // Step 17 (rk): a platform passkey is always discoverable; one per RP and user handle. A
        // faulted response is one the RP must reject, so it leaves the store as it was: nothing is
        // stored, and no passkey the RP still relies on is replaced.
        if request.fault == nil {
            try store.save(credential, privateKey: key, replacing: sameUser, verification: request.verificationBindsKey ? verification : nil)
        }

        return MakeCredentialResponse(credential: credential, authenticatorData: authenticatorData,
                                      attestationObject: attestation, publicKeySPKI: coseKey.subjectPublicKeyInfo,
                                      extensionOutputs: outputs)
    }

    /// The longest credBlob stored (CTAP 2.1 §12.2: maxCredBlobLength, at least 32).
    package static var maximumCredBlobLength: Int { 32 }

    /// The authenticator data's extension outputs of a registration (`nil`: none, no ED flag).
    /// CBORValue encodes maps canonically, so the keys come out in CTAP2 order.
    func registrationExtensionMap(_ extensions: MakeCredentialExtensions, credential: Credential,
                                  outputs: MakeCredentialExtensionOutputs) -> CBORValue? {
        var map = [(CBORValue, CBORValue)]()
        if let level = extensions.credProtect { map.append((.text("credProtect"), .int(Int(level.rawValue)))) }
        if extensions.hmacSecret { map.append((.text("hmac-secret"), .bool(true))) }
        if let stored = outputs.credBlob { map.append((.text("credBlob"), .bool(stored))) }
        if extensions.minPinLength, let length = configuration.minimumPINLength {
            map.append((.text("minPinLength"), .int(length)))
        }
        return map.isEmpty ? nil : .map(map)
    }
}

extension Authenticator {
    /// A U2F authenticator has no AAGUID: fido-u2f attested credential data carries zeros.
    static var zeroAAGUID: [UInt8] { [UInt8](repeating: 0, count: 16) }

    /// The attestation object in `format` for a new credential with `key`.
    func attestationObject(_ format: AttestationFormat, authenticatorData: [UInt8], clientDataHash: [UInt8],
                           key: PrivateKey) throws(AuthenticatorError) -> AttestationObject {
        let profile = configuration.profile
        if format == .none { return .none(authenticatorData: authenticatorData) }
        if format == .packed && profile.selfAttests {
            do { return try .packedSelf(authenticatorData: authenticatorData, clientDataHash: clientDataHash, key: key) }
            catch { throw AuthenticatorError(error) }
        }
        guard let ca = configuration.attestationCA else {
            throw AuthenticatorError(.notSupported, "\(format.rawValue) attestation needs an attestation CA, and this authenticator has none")
        }
        let input = AttestationStatementInput(
            authenticatorData: authenticatorData, clientDataHash: clientDataHash, credentialAlgorithm: key.algorithm.rawValue,
            credentialPublicKey: key.subjectPublicKeyInfo, signWithCredentialKey: { message throws(OpenSSLFailure) in try key.sign(message) },
            aaguid: format == .fidoU2F ? Self.zeroAAGUID : configuration.aaguid, ca: ca,
            certificateSubject: .authenticatorAttestation(country: "US", organization: profile.vendor,
                                                          commonName: "\(profile.vendor) \(profile.name) attestation"),
            certificateValidity: AttestationCA.validity)
        let statement: CBORValue
        do throws(AttestationStatementError) {
            switch format {
            case .packed: statement = try PackedAttestationStatement.build(input)
            case .fidoU2F: statement = try FIDOU2FAttestationStatement.build(input)
            case .apple: statement = try AppleAnonymousAttestationStatement.build(input)
            case .androidKey: statement = try AndroidKeyAttestationStatement.build(input)
            case .tpm: statement = try TPMAttestationStatement.build(input, credentialKey: key.publicKey)
            case .none: statement = .map([])
            }
        } catch { throw AuthenticatorError(.unknown, "could not make the \(format.rawValue) attestation: \(error)") }
        return AttestationObject(format: format, statement: statement, authenticatorData: authenticatorData)
    }
}
