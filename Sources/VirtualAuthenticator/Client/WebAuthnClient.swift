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
    public func create(options: CreationOptions, origin originText: String, fault: Fault? = nil) throws(AuthenticatorError) -> RegistrationResponse {
        let origin = try Origin(parsing: originText)
        let rpId = try RelyingPartyIdentifier.validate(options.rpId, for: origin, suffixes: suffixes())
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
        var clientData = CollectedClientData(type: .create, challenge: options.challenge, origin: origin.serialized)
        fault?.apply(to: &clientData)
        let result = try authenticator.makeCredential(MakeCredentialRequest(
            clientDataHash: clientData.hash, rpId: rpId, userHandle: options.userId, userName: options.userName,
            userDisplayName: options.userDisplayName, algorithms: options.algorithms,
            excludeList: options.excludeCredentials,
            performUserVerification: performsUserVerification(options.userVerification),
            attestation: conveyance, zeroAAGUID: enterpriseRefused, timeoutMilliseconds: options.timeout, fault: fault,
            extensions: extensions))
        return RegistrationResponse(
            clientDataJSON: clientData.json, result: result,
            clientExtensionResults: Self.registrationResults(options.extensions, result.extensionOutputs),
            authenticatorAttachment: attachment, transports: authenticator.configuration.profile.transports)
    }

    /// `navigator.credentials.get()`: returns AuthenticationResponseJSON (§5.1.12).
    public func get(options: RequestOptions, origin originText: String, fault: Fault? = nil) throws(AuthenticatorError) -> AuthenticationResponse {
        let origin = try Origin(parsing: originText)
        let rpId = try RelyingPartyIdentifier.validate(options.rpId, for: origin, suffixes: suffixes())
        if let fault, !fault.applies(to: .authentication) {
            throw AuthenticatorError(.faultNotApplicable, "fault \(fault.rawValue) cannot be produced for a sign-in (\(fault.summary))")
        }
        let extensions = try Self.assertionExtensions(options.extensions, allowCredentials: options.allowCredentials)
        var clientData = CollectedClientData(type: .get, challenge: options.challenge, origin: origin.serialized)
        fault?.apply(to: &clientData)
        let result = try authenticator.getAssertion(GetAssertionRequest(
            clientDataHash: clientData.hash, rpId: rpId, allowList: options.allowCredentials,
            performUserVerification: performsUserVerification(options.userVerification),
            timeoutMilliseconds: options.timeout, fault: fault, extensions: extensions))
        let configuration = authenticator.configuration
        let madeAs = configuration.attachmentFollowsCredential ? AuthenticatorProfile.named(result.credential.profile) : nil
        return AuthenticationResponse(clientDataJSON: clientData.json, result: result,
                                      authenticatorAttachment: madeAs?.attachment ?? configuration.attachment,
                                      clientExtensionResults: Self.assertionResults(options.extensions, result.extensionOutputs))
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
