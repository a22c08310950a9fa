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
        // Step 10: no `pubKeyCredParams` entry of a type the client supports (only `public-key`
        // exists). Supported types with algorithms no authenticator makes are the authenticator's
        // refusal (NotAllowedError), not this one.
        guard !options.algorithms.isEmpty else {
            throw AuthenticatorError(.notSupported, "options.pubKeyCredParams has no entry of type public-key (NotSupportedError)")
        }
        // Mediation: a conditional create (an automatic upgrade) asks the user nothing and happens
        // only after a recent password sign-in — without one it stays pending until its timeout,
        // as in Chromium 156. `silent` is treated as `optional`, as Chromium 156 does.
        let conditional = caller.mediation == .conditional
        if conditional {
            guard caller.recentPasswordSignIn else {
                throw pending(UserPrompt(ceremony: .registration, rpId: rpId, userName: options.userName, timeoutMilliseconds: options.timeout),
                              because: "a conditional create waits for a recent password sign-in of this user in the password manager, and there was none")
            }
            guard options.userVerification != .required else {
                throw AuthenticatorError(.notHandled, "a conditional create cannot verify the user (userVerification is required)")
            }
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
        let extensions = try Self.registrationExtensions(options.extensions, userVerification: options.userVerification)
        var clientData = CollectedClientData(type: .create, challenge: options.challenge, origin: origin.serialized,
                                             crossOrigin: top != nil, topOrigin: top?.serialized)
        clientData.omitsCrossOrigin = caller.nativeApp
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
            authenticatorAttachment: attachment, transports: authenticator.configuration.profile.transports,
            warnings: options.warnings)
    }

    /// `navigator.credentials.get()`: returns AuthenticationResponseJSON (§5.1.12).
    public func get(options: RequestOptions, origin: String, fault: Fault? = nil) throws(AuthenticatorError) -> AuthenticationResponse {
        try get(options: options, caller: CallerContext(origin: origin), fault: fault)
    }

    /// `navigator.credentials.get()` called as `caller` says: from an iframe, with a mediation.
    public func get(options: RequestOptions, caller: CallerContext, fault: Fault? = nil) throws(AuthenticatorError) -> AuthenticationResponse {
        let (origin, top, rpId, extensions) = try checked(options, caller: caller, fault: fault)
        // An allow list whose transports do not reach this authenticator: the browser does not ask
        // it and waits for another one (a security key, the cross-device flow) until the timeout.
        if !reaches(options.allowTransports) {
            throw pending(UserPrompt(ceremony: .authentication, rpId: rpId, userName: nil, timeoutMilliseconds: options.timeout),
                          because: "the allowCredentials transports (\(Self.transportSummary(options.allowTransports))) do not include "
                              + "\(reachedTransports.sorted().joined(separator: " or ")), how the client reaches this authenticator, so it was not asked")
        }
        var clientData = CollectedClientData(type: .get, challenge: options.challenge, origin: origin.serialized,
                                             crossOrigin: top != nil, topOrigin: top?.serialized)
        clientData.omitsCrossOrigin = caller.nativeApp
        fault?.apply(to: &clientData)
        let clientDataJSON = clientData.json
        let result: GetAssertionResponse
        do {
            result = try authenticator.getAssertion(assertionRequest(options, rpId: rpId, extensions: extensions,
                                                                     clientDataHash: SHA256.hash(clientDataJSON), fault: fault))
        } catch where caller.mediation == .conditional && (error.code == .notHandled || error.code == .canceled) {
            // Autofill: no passkey to offer, or the user passed them by — the call stays pending
            // until its timeout, with no NotAllowedError in between.
            throw pending(UserPrompt(ceremony: .authentication, rpId: rpId, userName: nil, timeoutMilliseconds: options.timeout),
                          because: "nobody picked a passkey (conditional mediation)")
        }
        let configuration = authenticator.configuration
        let madeAs = configuration.attachmentFollowsCredential ? AuthenticatorProfile.named(result.credential.profile) : nil
        var response = AuthenticationResponse(clientDataJSON: clientDataJSON, result: result,
                                              authenticatorAttachment: madeAs?.attachment ?? configuration.attachment,
                                              clientExtensionResults: Self.assertionResults(options.extensions, result.extensionOutputs))
        response.warnings = options.warnings
        return response
    }

    /// What a sign-in's account picker offers — a conditional sign-in's autofill list: the
    /// authenticator's own candidates for these options from this caller, oldest first; none when
    /// the browser would not ask this authenticator (`allowCredentials` transports that do not
    /// reach it). Refuses what ``check(_:caller:fault:)`` refuses.
    public func offers(_ options: RequestOptions, caller: CallerContext, fault: Fault? = nil) throws(AuthenticatorError) -> [Credential] {
        let (_, _, rpId, extensions) = try checked(options, caller: caller, fault: fault)
        guard reaches(options.allowTransports) else { return [] }
        let request = assertionRequest(options, rpId: rpId, extensions: extensions, clientDataHash: [], fault: fault)
        return try authenticator.candidates(for: request).map(Array.init) ?? []
    }

    /// The authenticatorGetAssertion request a sign-in with these options sends.
    private func assertionRequest(_ options: RequestOptions, rpId: String, extensions: GetAssertionExtensions, clientDataHash: [UInt8],
                                  fault: Fault?) -> GetAssertionRequest {
        GetAssertionRequest(
            clientDataHash: clientDataHash, rpId: rpId, allowList: options.allowCredentials,
            performUserVerification: performsUserVerification(options.userVerification)
                || ((extensions.hmacSecret != nil || !extensions.hmacSecretByCredential.isEmpty) && authenticator.user.canVerify),
            timeoutMilliseconds: options.timeout, fault: fault, extensions: extensions)
    }

    /// What the browser refuses before it asks any authenticator — the caller (an iframe's
    /// permission, conditional mediation in a cross-origin frame), the RP ID, uiMode, the fault,
    /// the extensions — for a sign-in that has not begun: a conditional one is checked so before
    /// it waits for the person's pick. The RP ID the sign-in uses.
    @discardableResult
    public func check(_ options: RequestOptions, caller: CallerContext, fault: Fault? = nil) throws(AuthenticatorError) -> String {
        try checked(options, caller: caller, fault: fault).rpId
    }

    private func checked(_ options: RequestOptions, caller: CallerContext, fault: Fault?)
        throws(AuthenticatorError) -> (origin: Origin, top: Origin?, rpId: String, extensions: GetAssertionExtensions) {
        let (origin, top) = try caller.resolve(.authentication)
        let rpId = try rpIdentifier(options.rpId, origin: origin, caller: caller)
        // `silent` is treated as `optional` (Chromium 156). Immediate sign-in (uiMode immediate):
        // not with conditional mediation, no allow list, only after a user activation.
        if caller.uiMode == .immediate {
            guard caller.mediation != .conditional else {
                throw AuthenticatorError(.notSupported, "uiMode immediate is not compatible with conditional mediation (NotSupportedError)")
            }
            guard options.allowCredentials.isEmpty else {
                throw AuthenticatorError(.notHandled, "allowCredentials is not allowed with uiMode immediate")
            }
            guard caller.userActivation else {
                throw AuthenticatorError(.notHandled, "uiMode immediate needs a user activation (a click) just before")
            }
        }
        if let fault, !fault.applies(to: .authentication) {
            throw AuthenticatorError(.faultNotApplicable, "fault \(fault.rawValue) cannot be produced for a sign-in (\(fault.summary))")
        }
        let extensions = try Self.assertionExtensions(options.extensions, allowCredentials: options.allowCredentials)
        // Immediate sign-in offers local passkeys only, never the cross-device flow: over hybrid
        // there is none to offer. Checked here, after what the options and the caller make the
        // browser refuse (TypeError, EncodingError, SecurityError, NotSupportedError) first.
        if caller.uiMode == .immediate && overHybrid {
            throw AuthenticatorError(.notHandled, "immediate sign-in (uiMode immediate) never signs across devices (hybrid)")
        }
        return (origin, top, rpId, extensions)
    }

    /// The call stays pending until its timeout (the user waits it out): the error it ends with,
    /// saying why it was pending.
    func pending(_ prompt: UserPrompt, because reason: String) -> AuthenticatorError {
        let waited = authenticator.user.outwait(prompt)
        return waited.saying("\(waited.message): \(reason)")
    }

    /// The transports a descriptor may name, as Chromium 156 reads them (`cable` is hybrid's old
    /// name; checked in headless Chromium: `smart-card` is known too); any other value is
    /// dropped, and a descriptor left with none matches any authenticator.
    static func knownTransport(_ name: String) -> String? {
        switch name {
        case "usb", "nfc", "ble", "smart-card", "hybrid", "internal": name
        case "cable": "hybrid"
        default: nil
        }
    }

    /// How the client reaches this authenticator: `internal` for a platform authenticator,
    /// `hybrid` for another device answering over hybrid (`--via`), a security key's own
    /// transports (`usb`, `nfc`).
    /// Whether this authenticator answers for another device over hybrid (``AuthenticatorConfiguration``
    /// given the attachment `cross-platform`), as a phone answers a laptop's sign-in.
    var overHybrid: Bool {
        let configuration = authenticator.configuration
        return !configuration.attachmentFollowsCredential && configuration.attachment == .crossPlatform
    }

    var reachedTransports: Set<String> {
        let configuration = authenticator.configuration
        if overHybrid { return ["hybrid"] }
        return configuration.profile.attachment == .platform ? ["internal"] : Set(configuration.profile.transports)
    }

    /// Whether a sign-in with these `allowCredentials` transports asks this authenticator: no allow
    /// list, an entry with no (known) transports, or one naming a transport that reaches it —
    /// Chromium dispatches to the authenticators of the union of the entries' transports.
    func reaches(_ allowTransports: [[String]]) -> Bool {
        guard !allowTransports.isEmpty else { return true }
        var union = Set<String>()
        for transports in allowTransports {
            let known = transports.compactMap { Self.knownTransport($0) }
            if known.isEmpty { return true }
            union.formUnion(known)
        }
        return !union.isDisjoint(with: reachedTransports)
    }

    static func transportSummary(_ allowTransports: [[String]]) -> String {
        Set(allowTransports.flatMap { $0.compactMap { knownTransport($0) } }).sorted().joined(separator: ", ")
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
