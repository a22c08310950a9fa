import Session

/// `authctl sign`: navigator.credentials.get() from the shell.
enum SignCommand {
    static let via = OptionSpec.value(
        "--via", "DEVICE", "sign on another device of the account over hybrid (as a phone does for a laptop): its passkeys, its flags, its PIN; answers allowCredentials whose transports name hybrid")
    static let noUserActivation = OptionSpec.flag(
        "--no-user-activation", "with --ui-mode immediate: no click just before the call (NotAllowedError: immediate sign-in needs one)")
    static let credential = OptionSpec.value("--credential", "ID", "use this passkey among the candidates (base64url credential id)")
    static let user = OptionSpec.value("--user", "NAME", "use the candidate whose user name, or base64url user handle, is NAME")
    // A conditional sign-in (--mediation conditional): what the person does with the autofill list.
    static let pick = OptionSpec.value(
        "--pick", "ID", "with --mediation conditional: the person picks this passkey (base64url credential id) from the autofill list; notHandled (exit 13) when the list does not offer it")
    static let dismiss = OptionSpec.flag(
        "--dismiss", "with --mediation conditional: the person dismisses the autofill list; the call stays pending until its timeout and ends timedOut (exit 19; at once with --instant-timeout)")
    static let offers = OptionSpec.flag(
        "--offers", "with --mediation conditional: print what the autofill list offers (a JSON array: credentialId, userName, userDisplayName, userHandle), and pick nothing")
    // Without --options, these build the options.
    static let rpId = OptionSpec.value("--rp-id", "ID", "built options: rpId (default: the origin's host)")
    static let challenge = OptionSpec.value("--challenge", "B64URL", "built options: the challenge (default 32 random bytes)")
    static let allow = OptionSpec.value("--allow", "ID", "built options: a credential id for allowCredentials (repeatable)", repeatable: true)

    static let spec = CommandSpec(
        name: "sign", abstract: "sign in with a passkey: navigator.credentials.get() from the shell",
        discussion: """
        Reads PublicKeyCredentialRequestOptionsJSON (also wrapped) from --options, or builds it from the
        flags, and prints AuthenticationResponseJSON on stdout. Among several candidates the newest is
        used unless --credential, --user or CREDENTIAL_ID picks one. With --mediation conditional the
        call is the page's autofill: --offers prints what its list offers, --pick ID picks one of them,
        --dismiss closes the list (the call then waits out its timeout: timedOut).
        """,
        options: CeremonyOptions.all + [CeremonyOptions.uiMode, noUserActivation, via, credential, user, pick, dismiss, offers, rpId, challenge,
                                        allow, CeremonyOptions.userVerification],
        arguments: [ArgumentSpec(name: "CREDENTIAL_ID", help: "the passkey to use, as --credential (after '--' when it starts with '-')",
                                 optional: true, credentialId: true)],
        examples: [
            "authctl sign --origin https://example.com --user alice",
            "authctl sign --origin https://example.com -- -AbCdEfGhIjKlMnOpQrStUw",
            "authctl sign --origin https://example.com --ui-mode immediate",
            "authctl sign --origin https://example.com --mediation conditional --offers",
            "authctl sign --origin https://example.com --mediation conditional --pick AbCdEfGhIjKlMnOpQrStUw",
        ],
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        let ids = [args.value(credential), args.argument(0)].compactMap { $0 }
        guard Set(ids).count <= 1 else { throw CLIError(.usage, "--credential and CREDENTIAL_ID name different passkeys") }
        let account = AccountChoice(credentialId: try ids.first.map { t throws(CLIError) in try CredentialId.decode(t, "--credential") }, user: args.value(user))
        let caller = try CeremonyOptions.caller(args, userActivation: !args.flag(noUserActivation))
        if let person = try autofill(args) {
            guard caller.mediation == .conditional else {
                throw CLIError(.usage, "\(person.flag) is what the person does with a conditional sign-in's autofill list: add --mediation conditional")
            }
            guard ids.isEmpty && args.value(user) == nil else {
                throw CLIError(.usage, "\(person.flag) and \(args.value(user) == nil ? "--credential" : "--user") both say which passkey: a conditional sign-in's is the one picked from the list")
            }
            return try conditional(args, caller: caller, person)
        }
        // Exclusive, as every ceremony: a counting credential's counter, and the biometric failure
        // count, are written before anything is printed.
        try CeremonyOptions.perform(args) { given, vault throws(CLIError) in
            let options: OptionsSource<RequestOptionsBuilder> = if let given { .json(given) } else { .built(try builder(args)) }
            return .sign(SignRequest(device: vault.deviceName, via: args.value(via), caller: caller, options: options,
                                     person: try CeremonyOptions.person(args, account: account), fault: CeremonyOptions.fault(args)))
        }
    }

    /// What the person does with the autofill list of a conditional sign-in.
    enum Autofill {
        case offers, pick([UInt8]), dismiss

        var flag: String {
            switch self {
            case .offers: SignCommand.offers.name
            case .pick: SignCommand.pick.name
            case .dismiss: SignCommand.dismiss.name
            }
        }
    }

    /// `--offers`, `--pick ID` or `--dismiss` (at most one); `nil` when none is given.
    static func autofill(_ args: ParsedArguments) throws(CLIError) -> Autofill? {
        var given = [Autofill]()
        if args.flag(offers) { given.append(.offers) }
        if let id = args.value(pick) { given.append(.pick(try CredentialId.decode(id, pick.name))) }
        if args.flag(dismiss) { given.append(.dismiss) }
        guard given.count <= 1 else { throw CLIError(.usage, "\(given.map(\.flag).joined(separator: " and ")) say different things the person does: give one") }
        return given.first
    }

    /// A conditional sign-in, pending from its beginning until the person acts on its list: the
    /// list printed, a passkey picked and the response printed, or the list dismissed — the call
    /// then stays pending until its timeout, as a page's promise does (Credential Management:
    /// neither resolved nor rejected), and ends `timedOut`.
    static func conditional(_ args: ParsedArguments, caller: CallerContext, _ person: Autofill) throws(CLIError) {
        try Output.requireStdout()
        let vault = try VaultSelection(args)
        let given = try CeremonyOptions.optionsJSON(args)
        let options: OptionsSource<RequestOptionsBuilder> = if let given { .json(given) } else { .built(try builder(args)) }
        // Looking at the list is a read: it changes nothing in the vault or the store.
        let looks = if case .offers = person { true } else { false }
        let session = try vault.session(looks ? .read : .write)
        let pending = try session.beginConditional(SignRequest(device: vault.deviceName, via: args.value(via), caller: caller, options: options,
                                                               person: try CeremonyOptions.person(args), fault: CeremonyOptions.fault(args)))
        switch person {
        case .offers:
            try Output.data(JSONOutput.string(try pending.offered().map(AutofillOfferReport.init)))
        case .pick(let id):
            try CeremonyOptions.printResponse(try pending.pick(AccountChoice(credentialId: id)))
        case .dismiss:
            try pending.dismiss()
            throw pending.waitOut()
        }
    }

    /// PublicKeyCredentialRequestOptionsJSON, as much of it as the flags build.
    static func builder(_ args: ParsedArguments) throws(CLIError) -> RequestOptionsBuilder {
        var allowed = [[UInt8]]()
        for id in args.values(allow) { allowed.append(try CredentialId.decode(id, "--allow")) }
        return RequestOptionsBuilder(
            rpId: CeremonyOptions.builtRPId(args.value(rpId)),
            challenge: try args.value(challenge).map { v throws(CLIError) in try CeremonyOptions.builtBase64URL(v, "--challenge") },
            userVerification: args.value(CeremonyOptions.userVerification) ?? "preferred", allow: allowed)
    }
}
