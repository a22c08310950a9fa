/// authenticatorMakeCredential (CTAP 2.1 §6.1), as a platform authenticator performs it.
public struct MakeCredentialRequest: Sendable {
    public var clientDataHash: [UInt8]
    public var rpId: String
    public var userHandle: [UInt8]
    public var userName: String
    public var userDisplayName: String
    /// COSE algorithm identifiers in the RP's order of preference.
    public var algorithms: [Int]
    public var excludeList: [[UInt8]]
    /// Whether to perform user verification (the client decided from `userVerification`).
    public var performUserVerification: Bool
    /// What the RP asked for; the authenticator's profile decides the format that answers it.
    public var attestation: AttestationConveyance
    public var timeoutMilliseconds: Int?
    public var fault: Fault?

    public init(clientDataHash: [UInt8], rpId: String, userHandle: [UInt8], userName: String,
                userDisplayName: String, algorithms: [Int], excludeList: [[UInt8]],
                performUserVerification: Bool, attestation: AttestationConveyance,
                timeoutMilliseconds: Int? = nil, fault: Fault? = nil) {
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
    }
}

public struct MakeCredentialResponse: Sendable {
    public let credential: Credential
    public let authenticatorData: [UInt8]
    public let attestationObject: AttestationObject
    public let publicKeySPKI: [UInt8]
}

extension Authenticator {
    public func makeCredential(_ request: MakeCredentialRequest) throws(AuthenticatorError) -> MakeCredentialResponse {
        // Step 3: the first algorithm this model makes, in the RP's order (or the one it prefers).
        let profile = configuration.profile
        guard let algorithm = profile.algorithm(for: request.algorithms) else {
            throw AuthenticatorError(.notSupported, "no algorithm in pubKeyCredParams that profile \(profile.name) makes (it makes \(profile.algorithms.map(\.description).joined(separator: ", ")))")
        }
        let format = configuration.format(for: request.attestation)
        if format == .fidoU2F && algorithm != .es256 {
            throw AuthenticatorError(.notSupported, "fido-u2f attestation needs an ES256 (-7) credential; pubKeyCredParams does not offer it")
        }
        let prompt = UserPrompt(ceremony: .registration, rpId: request.rpId, userName: request.userName,
                                timeoutMilliseconds: request.timeoutMilliseconds)
        let existing = try store.credentials(forRP: request.rpId)
        try requireVerificationPossible(request.performUserVerification)

        // The user consents (presence; `cancel` ends here), then built-in user verification when
        // the client asked for it (CTAP 2.1 §6.1.2 step 6, performBuiltInUv).
        try user.confirmPresence(prompt)
        let verification = request.performUserVerification ? try user.verifyUser(prompt) : nil

        // Step 11 (excludeList), after the user consented, so an RP cannot probe the keychain
        // silently. A passkey made with user verification (credProtect userVerificationRequired)
        // is only visible once the user was verified: without UV it is left out of the check.
        let excluded = existing.filter { request.excludeList.contains($0.id) }
        if excluded.contains(where: { !$0.requiresUserVerification || verification != nil }) {
            throw AuthenticatorError(.matchedExcludedCredential,
                "a credential in excludeCredentials already exists for \(request.rpId); nothing was stored")
        }

        // Step 17: a fresh key pair and a random credential id.
        let key: PrivateKey
        do { key = try PrivateKey.generate(algorithm) } catch { throw AuthenticatorError(error) }
        let coseKey = key.publicKey
        let credential = Credential(
            id: random.bytes(configuration.credentialIdLength), rpId: request.rpId,
            userHandle: request.userHandle, userName: request.userName,
            userDisplayName: request.userDisplayName, createdAt: clock.seconds, signCount: 0,
            backupEligible: configuration.backupEligible, backupState: configuration.backupState,
            publicKey: coseKey, countsSignatures: configuration.signatureCounter,
            requiresUserVerification: request.performUserVerification)

        var flags: AuthenticatorFlags = [.userPresent]
        flags.set(.userVerified, request.performUserVerification)
        flags.set(.backupEligible, credential.backupEligible)
        flags.set(.backupState, credential.backupState)
        var data = AuthenticatorData(
            rpId: request.rpId, flags: flags, signCount: credential.signCount,
            attestedCredentialData: AttestedCredentialData(
                aaguid: configuration.aaguid, credentialId: credential.id, publicKey: coseKey))
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
            let replaced = existing.filter { $0.userHandle == request.userHandle }
            try store.save(credential, privateKey: key, replacing: replaced, verification: verification)
        }

        return MakeCredentialResponse(credential: credential, authenticatorData: authenticatorData,
                                      attestationObject: attestation, publicKeySPKI: key.subjectPublicKeyInfo)
    }
}

extension Authenticator {
    /// The attestation object in `format` for a new credential with `key`.
    func attestationObject(_ format: AttestationFormat, authenticatorData: [UInt8], clientDataHash: [UInt8],
                           key: PrivateKey) throws(AuthenticatorError) -> AttestationObject {
        do throws(OpenSSLFailure) {
            switch format {
            case .none: return .none(authenticatorData: authenticatorData)
            case .packed: return try .packedSelf(authenticatorData: authenticatorData, clientDataHash: clientDataHash, key: key)
            default: break
            }
        } catch { throw AuthenticatorError(error) }
        throw AuthenticatorError(.notSupported, "\(format.rawValue) attestation is not available")
    }
}
