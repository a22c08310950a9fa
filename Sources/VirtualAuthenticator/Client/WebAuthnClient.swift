/// The browser's part of the ceremonies (WebAuthn L3 §5.1.3 "Create a New Credential" and §5.1.4
/// "Use an Existing Credential"): check the origin and RP ID, write clientDataJSON, decide user
/// verification, call the authenticator, and shape the response a page would POST.
public struct WebAuthnClient<Store: CredentialStore, User: UserInteraction> where Store.Verification == User.Verification {
    public let authenticator: Authenticator<Store, User>
    /// The Public Suffix List, fetched only when an RP ID differs from the origin's host.
    public let suffixes: @Sendable () -> PublicSuffixList

    public init(authenticator: Authenticator<Store, User>, suffixes: @escaping @Sendable () -> PublicSuffixList = { .system }) {
        self.authenticator = authenticator
        self.suffixes = suffixes
    }

    /// `navigator.credentials.create()`: returns RegistrationResponseJSON (§5.1.11).
    public func create(options: CreationOptions, origin: String, fault: Fault? = nil) throws(AuthenticatorError) -> RegistrationResponse {
        try create(options: options, caller: CallerContext(origin: origin), fault: fault)
    }

    /// `navigator.credentials.create()` called as `caller` says: from an iframe, with a mediation.
    public func create(options: CreationOptions, caller: CallerContext, fault: Fault? = nil) throws(AuthenticatorError) -> RegistrationResponse {
        let (origin, top) = try caller.resolve(.registration)
        let rpId = try rpIdentifier(options.rpId, origin: origin, caller: caller)
        // Mediation: a conditional create (an automatic upgrade) asks the user nothing and happens
        // only after a recent password sign-in; silent and immediate do not apply to create.
        let conditional = caller.mediation == .conditional
        switch caller.mediation {
        case .silent, .immediate:
            throw AuthenticatorError(.notHandled, "mediation \(caller.mediation.rawValue) cannot create a passkey")
        case .conditional:
            guard caller.recentPasswordSignIn else {
                throw AuthenticatorError(.notHandled, "a conditional create needs a recent password sign-in for this user in the password manager")
            }
            guard options.userVerification != .required else {
                throw AuthenticatorError(.notHandled, "a conditional create cannot verify the user (userVerification is required)")
            }
        case .optional, .required:
            break
        }
        // Step 20: an authenticator attached otherwise than the RP asks is not eligible.
        let attachment = authenticator.configuration.attachment
        if let wanted = options.authenticatorAttachment, AuthenticatorAttachment(rawValue: wanted) != nil, wanted != attachment.rawValue {
            throw AuthenticatorError(.notHandled,
                "authenticatorSelection.authenticatorAttachment is \(wanted); this authenticator (profile \(authenticator.configuration.profile.name)) is \(attachment.rawValue)")
        }
        // §5.4.7 `enterprise`: only for an RP ID the client's policy lists; otherwise `none`, and an
        // AAGUID of zeros, so that nothing names the device (docs/conformance.md).
        let enterpriseRefused = options.attestation == .enterprise && !authenticator.configuration.permitsEnterpriseAttestation(rpId: rpId)
        let conveyance = enterpriseRefused ? .none : options.attestation
        if let fault, !fault.applies(to: .registration, attestation: authenticator.configuration.format(for: conveyance)) {
            throw AuthenticatorError(.faultNotApplicable, "fault \(fault.rawValue) cannot be produced for this registration (\(fault.summary))")
        }
        let extensions = try Self.registrationExtensions(options.extensions)
        var clientData = CollectedClientData(type: .create, challenge: options.challenge, origin: origin.serialized,
                                             crossOrigin: top != nil, topOrigin: top?.serialized)
        fault?.apply(to: &clientData)
        let clientDataJSON = clientData.json
        var request = MakeCredentialRequest(
            clientDataHash: SHA256.hash(clientDataJSON), rpId: rpId, userHandle: options.userId, userName: options.userName,
            userDisplayName: options.userDisplayName, algorithms: options.algorithms,
            excludeList: options.excludeCredentials,
            // prf is the PRF of a verified user (§10.1.4): asking for it verifies when possible.
            performUserVerification: !conditional && (performsUserVerification(options.userVerification)
                || (extensions.hmacSecretSalts != nil && authenticator.user.canVerify)),
            attestation: conditional ? .none : conveyance, zeroAAGUID: enterpriseRefused, timeoutMilliseconds: options.timeout,
            fault: fault, extensions: extensions)
        request.requireUserPresence = !conditional
        let result = try authenticator.makeCredential(request)
        return RegistrationResponse(
            clientDataJSON: clientDataJSON, result: result,
            clientExtensionResults: Self.registrationResults(options.extensions, result.extensionOutputs),
            authenticatorAttachment: attachment, transports: authenticator.configuration.profile.transports)
    }

    /// `navigator.credentials.get()`: returns AuthenticationResponseJSON (§5.1.12).
    public func get(options: RequestOptions, origin: String, fault: Fault? = nil) throws(AuthenticatorError) -> AuthenticationResponse {
        try get(options: options, caller: CallerContext(origin: origin), fault: fault)
    }

    /// `navigator.credentials.get()` called as `caller` says: from an iframe, with a mediation.
    public func get(options: RequestOptions, caller: CallerContext, fault: Fault? = nil) throws(AuthenticatorError) -> AuthenticationResponse {
        let (origin, top) = try caller.resolve(.authentication)
        let rpId = try rpIdentifier(options.rpId, origin: origin, caller: caller)
        if caller.mediation == .silent {
            throw AuthenticatorError(.notHandled, "silent mediation: a passkey sign-in always involves the user")
        }
        if let fault, !fault.applies(to: .authentication) {
            throw AuthenticatorError(.faultNotApplicable, "fault \(fault.rawValue) cannot be produced for a sign-in (\(fault.summary))")
        }
        let extensions = try Self.assertionExtensions(options.extensions, allowCredentials: options.allowCredentials)
        var clientData = CollectedClientData(type: .get, challenge: options.challenge, origin: origin.serialized,
                                             crossOrigin: top != nil, topOrigin: top?.serialized)
        fault?.apply(to: &clientData)
        let clientDataJSON = clientData.json
        let result: GetAssertionResponse
        do {
            result = try authenticator.getAssertion(GetAssertionRequest(
                clientDataHash: SHA256.hash(clientDataJSON), rpId: rpId, allowList: options.allowCredentials,
                performUserVerification: performsUserVerification(options.userVerification)
                    || ((extensions.hmacSecret != nil || !extensions.hmacSecretByCredential.isEmpty) && authenticator.user.canVerify),
                timeoutMilliseconds: options.timeout, fault: fault, extensions: extensions))
        } catch where caller.mediation == .conditional && (error.code == .notHandled || error.code == .canceled) {
            // Autofill: no passkey to offer, or the user passed them by — the call stays pending
            // until its timeout, with no NotAllowedError in between.
            throw authenticator.user.outwait(UserPrompt(ceremony: .authentication, rpId: rpId, userName: nil,
                                                        timeoutMilliseconds: options.timeout))
        }
        let configuration = authenticator.configuration
        let madeAs = configuration.attachmentFollowsCredential ? AuthenticatorProfile.named(result.credential.profile) : nil
        return AuthenticationResponse(clientDataJSON: clientDataJSON, result: result,
                                      authenticatorAttachment: madeAs?.attachment ?? configuration.attachment,
                                      clientExtensionResults: Self.assertionResults(options.extensions, result.extensionOutputs))
    }

    /// The RP ID, checked against the caller's origin, with the caller's related origins (§5.11).
    func rpIdentifier(_ rpId: String?, origin: Origin, caller: CallerContext) throws(AuthenticatorError) -> String {
        try RelatedOrigins.validate(rpId, for: origin, source: caller.relatedOrigins, suffixes: suffixes())
    }

    /// `required` always verifies; `preferred` verifies when a biometric is enrolled (as a phone
    /// with Face ID does); `discouraged` asks for presence only.
    func performsUserVerification(_ requirement: UserVerificationRequirement) -> Bool {
        switch requirement {
        case .required: true
        case .preferred: authenticator.user.canVerify
        case .discouraged: false
        }
    }
}
