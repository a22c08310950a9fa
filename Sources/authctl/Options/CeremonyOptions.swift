import Session

/// The options `register` and `sign` share: where the call comes from, the options JSON, and what
/// the simulated user does.
enum CeremonyOptions {
    static let origin = OptionSpec.value(
        "--origin", "URL", "the calling page's origin: https://…, or http://localhost[:port]; a path is ignored", required: true)
    static let options = OptionSpec.value(
        "--options", "FILE", "the options JSON an RP server produced, from FILE or - (stdin)", completion: .files)
    static let userAction = OptionSpec.value(
        "--user-action", "ACTION", "what the simulated user does (default $AUTHCTL_USER_ACTION, else approve)",
        choices: UserAction.allCases.map(\.rawValue))
    static let instantTimeout = OptionSpec.flag(
        "--instant-timeout", "with --user-action timeout, or a call that stays pending until its timeout, end at once instead of waiting (also AUTHCTL_INSTANT_TIMEOUT=1)")
    static let fault = OptionSpec.value(
        "--fault", "NAME", "make the response deliberately wrong in one named way (see 'authctl faults')",
        choices: Fault.allCases.map(\.rawValue))

    static let userVerification = OptionSpec.value(
        "--user-verification", "REQUIREMENT", "built options: userVerification (default preferred)",
        choices: ["required", "preferred", "discouraged"])

    static let topOrigin = OptionSpec.value(
        "--top-origin", "URL", "the top-level page's origin: the call comes from a cross-origin iframe (crossOrigin, topOrigin in clientDataJSON)")
    static let noFramePermission = OptionSpec.flag(
        "--no-frame-permission", "with --top-origin: the iframe lacks allow=\"publickey-credentials-create|get\" (NotAllowedError)")
    // Not a parse-time choice: a value that is no CredentialMediationRequirement is the browser's
    // TypeError (badInput), as `mediation: "immediate"` is in Chromium 156.
    static let mediation = OptionSpec.value(
        "--mediation", "MODE", "the call's mediation: \(Mediation.allCases.map(\.rawValue).joined(separator: ", ")) (default optional; conditional: autofill sign-in, or an automatic upgrade on register; silent acts as optional)",
        suggestions: Mediation.allCases.map { $0.rawValue })
    static let uiMode = OptionSpec.value(
        "--ui-mode", "MODE", "sign: the request's uiMode: immediate (a local passkey or NotAllowedError at once) or passive (with --mediation conditional: ambient sign-in)",
        choices: UIMode.allCases.map(\.rawValue))
    static let strict = OptionSpec.flag(
        "--strict", "refuse options Chromium accepts with a warning: an empty challenge or user.id (badInput), base64url with non-zero trailing bits (encodingError)")
    static let relatedOrigins = OptionSpec.value(
        "--related-origins", "SOURCE", "the RP's .well-known/webauthn for an RP ID the origin is not a suffix of: a FILE, an http(s) URL, or 'fetch' (https://RPID/.well-known/webauthn)",
        completion: .files)

    static let all = [origin, options, userAction, instantTimeout, fault, topOrigin, noFramePermission, mediation, relatedOrigins, strict]

    /// Where the call comes from and how: the caller's context for the client.
    static func caller(_ args: ParsedArguments, userActivation: Bool = true, recentPasswordSignIn: Bool = false) throws(CLIError) -> CallerContext {
        var chosen = Mediation.optional
        if let name = args.value(mediation) {
            guard let value = Mediation(rawValue: name) else {
                let hint = name == "immediate" ? "; immediate sign-in is --ui-mode immediate" : ""
                throw CLIError(.badInput, "--mediation '\(EchoedInput.text(name))' is not a CredentialMediationRequirement (\(Mediation.allCases.map(\.rawValue).joined(separator: ", "))) (TypeError)\(hint)")
            }
            chosen = value
        }
        var context = CallerContext(origin: args.value(origin) ?? "", topOrigin: args.value(topOrigin),
                                    framePermission: !args.flag(noFramePermission), userActivation: userActivation,
                                    mediation: chosen, uiMode: args.value(uiMode).flatMap(UIMode.init(rawValue:)),
                                    recentPasswordSignIn: recentPasswordSignIn, strict: args.flag(strict))
        if let source = args.value(relatedOrigins) {
            if source == "fetch" {
                context.relatedOrigins = .wellKnown
            } else if source.hasPrefix("https://") || source.hasPrefix("http://") {
                context.relatedOrigins = .url(source)
            } else {
                context.relatedOrigins = .document(try OptionsInput.read(source, option: relatedOrigins.name, file: "related origins file"))
            }
        }
        return context
    }

    /// A binary value typed for built options (`--challenge`, `--user-id`, `--exclude`, `--allow`):
    /// read leniently, as typed ids are (standard base64 and `=` padding too), and written into
    /// the options as canonical unpadded base64url, which the options parser then reads strictly.
    static func builtBase64URL(_ text: String, _ flag: String) throws(CLIError) -> [UInt8] {
        guard let bytes = Base64URL.decode(text) else { throw CLIError(.badInput, "\(flag) '\(EchoedInput.text(text))' is not base64url") }
        return bytes
    }

    /// An RP ID typed for built options (`--rp-id`): in the form a browser compares, lower-case
    /// ASCII with A-labels (`Bücher.example` is written `xn--bcher-kva.example`); options JSON
    /// must already hold that form.
    static func builtRPId(_ text: String?) -> String? {
        text.map { (try? RelyingPartyIdentifier.ascii($0)) ?? $0 }
    }

    /// The simulated user: `--user-action` / `$AUTHCTL_USER_ACTION`, `--instant-timeout`, and the
    /// account picked; the PIN comes from the vault's source (`VaultSelection.user`).
    static func person(_ args: ParsedArguments, account: AccountChoice = .newest) throws(CLIError) -> PersonRequest {
        let name = args.value(userAction) ?? EnvironmentVariable.userAction.value ?? UserAction.approve.rawValue
        guard let action = UserAction(rawValue: name) else {
            throw CLIError(.usage, "\(EnvironmentVariable.userAction.name) must be one of \(UserAction.allCases.map(\.rawValue).joined(separator: ", ")), not '\(EchoedInput.text(name))'")
        }
        let instant = args.flag(instantTimeout) || EnvironmentVariable.instantTimeout.value == "1"
        return PersonRequest(action: action, account: account, instantTimeout: instant)
    }

    /// `--fault`, already checked against its choices.
    static func fault(_ args: ParsedArguments) -> Fault? { args.value(fault).flatMap(Fault.init(rawValue:)) }

    /// What both ceremonies do around the request layer: read the options (from `--options`, else
    /// what `prepare` builds from the flags) and the simulated user, open the vault for writing,
    /// run the request, and print the response; a fault, deliberately wrong, is said on stderr so
    /// no one mistakes it for a bug.
    static func perform(
        _ args: ParsedArguments,
        prepare: (_ given: [UInt8]?, _ vault: VaultSelection) throws(CLIError) -> CeremonyRequest
    ) throws(CLIError) {
        try Output.requireStdout()
        let vault = try VaultSelection(args)
        let request = try prepare(try optionsJSON(args), vault)
        try printResponse(try vault.session(.write).perform(request))
    }

    /// A ceremony's response on stdout, then what it carries deliberately (a fault) and what the
    /// RP should fix (warnings) on stderr.
    static func printResponse(_ response: CeremonyResponse) throws(CLIError) {
        do {
            try Output.data(response.json)
        } catch {
            // The vault change is durable by now (it had to be, before the response could exist).
            throw CLIError(.ioError, "\(error.message); the vault keeps what this ceremony did "
                + "(a registration's passkey is stored; a sign-in's counter, if the passkey counts, has advanced)")
        }
        // Only once the response is out: a failure to print it is one error line (one JSON object
        // with --json) on stderr, as every failure is, without notes of a success before it.
        if let fault = response.fault { Output.diagnostic("authctl: fault injected: \(fault.rawValue): \(fault.summary)") }
        // What the browser accepts but the RP should fix (without --strict): one line each.
        for warning in response.warnings { Output.diagnostic("authctl: warning: \(warning)") }
    }

    /// The options JSON from `--options FILE|-`, or `nil` when the flags build them.
    static func optionsJSON(_ args: ParsedArguments) throws(CLIError) -> [UInt8]? {
        try args.value(options).map { source throws(CLIError) in try OptionsInput.read(source) }
    }
}
