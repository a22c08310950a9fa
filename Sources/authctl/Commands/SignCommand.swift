import Keychain
import Session
import VirtualAuthenticator

/// `authctl sign`: navigator.credentials.get() from the shell.
enum SignCommand {
    static let via = OptionSpec.value(
        "--via", "DEVICE", "sign on another device of the account over hybrid (as a phone does for a laptop): its passkeys, its flags, its PIN; answers allowCredentials whose transports name hybrid")
    static let noUserActivation = OptionSpec.flag(
        "--no-user-activation", "with --ui-mode immediate: no click just before the call (NotAllowedError: immediate sign-in needs one)")
    static let credential = OptionSpec.value("--credential", "ID", "use this passkey among the candidates (base64url credential id)")
    static let user = OptionSpec.value("--user", "NAME", "use the candidate whose user name, or base64url user handle, is NAME")
    // Without --options, these build the options.
    static let rpId = OptionSpec.value("--rp-id", "ID", "built options: rpId (default: the origin's host)")
    static let challenge = OptionSpec.value("--challenge", "B64URL", "built options: the challenge (default 32 random bytes)")
    static let allow = OptionSpec.value("--allow", "ID", "built options: a credential id for allowCredentials (repeatable)", repeatable: true)

    static let spec = CommandSpec(
        name: "sign", abstract: "sign in with a passkey: navigator.credentials.get() from the shell",
        discussion: """
        Reads PublicKeyCredentialRequestOptionsJSON (also wrapped) from --options, or builds it from the
        flags, and prints AuthenticationResponseJSON on stdout. Among several candidates the newest is
        used unless --credential, --user or CREDENTIAL_ID picks one.
        """,
        options: CeremonyOptions.all + [CeremonyOptions.uiMode, noUserActivation, via, credential, user, rpId, challenge, allow, CeremonyOptions.userVerification],
        arguments: [ArgumentSpec(name: "CREDENTIAL_ID", help: "the passkey to use, as --credential (after '--' when it starts with '-')",
                                 optional: true)],
        examples: [
            "authctl sign --origin https://example.com --user alice",
            "authctl sign --origin https://example.com -- -AbCdEfGhIjKlMnOpQrStUw",
            "authctl sign --origin https://example.com --ui-mode immediate",
        ],
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        let ids = [args.value(credential), args.argument(0)].compactMap { $0 }
        guard Set(ids).count <= 1 else { throw CLIError(.usage, "--credential and CREDENTIAL_ID name different passkeys") }
        let account = AccountChoice(credentialId: try ids.first.map { t throws(CLIError) in try CredentialId.decode(t, "--credential") }, user: args.value(user))
        let caller = try CeremonyOptions.caller(args, userActivation: !args.flag(noUserActivation))
        // Exclusive, as every ceremony: a counting credential's counter, and the biometric failure
        // count, are written before anything is printed.
        try CeremonyOptions.perform(args) { given, vault throws(CLIError) in
            let options: OptionsSource<RequestOptionsBuilder> = if let given { .json(given) } else { .built(try builder(args)) }
            return .sign(SignRequest(device: vault.deviceName, via: args.value(via), caller: caller, options: options,
                                     person: try CeremonyOptions.person(args, account: account), fault: CeremonyOptions.fault(args)))
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
