import Session

/// `authctl signal unknown-credential | accepted-credentials | current-user-details`: the RP's
/// signal methods (WebAuthn L3 §5.1.10) from the shell.
enum SignalCommand {
    static let options = OptionSpec.value(
        "--options", "FILE", "the JSON the RP passes to the signal method, from FILE or - (stdin)", required: true, completion: .files)

    static let spec = CommandSpec(
        name: "signal", abstract: "tell the device what the RP knows: an unknown passkey, the accepted ones, the user's current names",
        discussion: """
        Each reads the options dictionary a page passes to PublicKeyCredential.signal… and changes the
        device's passkeys of that RP as a password manager does; the changes sync. Nothing is printed on
        stdout (the page learns nothing); what changed is said on stderr, and with --json printed as
        {"removed", "hidden", "restored", "updated"} (passkey ids). A signal that matches nothing
        succeeds.
        """,
        subcommands: [SignalUnknownCredentialCommand.spec, SignalAcceptedCredentialsCommand.spec, SignalCurrentUserDetailsCommand.spec])

    static func spec(_ kind: Signal.Kind, abstract: String, example: String) -> CommandSpec {
        CommandSpec(name: kind.rawValue, abstract: abstract, discussion: "PublicKeyCredential.\(kind.method)() from the shell.",
                    options: [CeremonyOptions.origin, options, CeremonyOptions.relatedOrigins], examples: [example],
                    run: { args throws(CLIError) in try run(kind, args) })
    }

    static func run(_ kind: Signal.Kind, _ args: ParsedArguments) throws(CLIError) {
        if args.flag(GlobalOptions.json) { try Output.requireStdout() }
        let json = try OptionsInput.read(args.value(options) ?? "-")
        let related = try CeremonyOptions.caller(args).relatedOrigins
        let vault = try VaultSelection(args)
        let effect = try vault.session(.write).signal(device: vault.deviceName, kind, optionsJSON: json,
                                                      origin: args.value(CeremonyOptions.origin) ?? "", relatedOrigins: related)
        // What changed, for a script (the page itself learns nothing): as the server answers it.
        // Written first, as a ceremony's response is before its warnings: when it cannot be, its
        // `ioError` is the one line (or JSON object) on stderr.
        if args.flag(GlobalOptions.json) { try Output.data(JSONOutput.string(SignalReport(effect))) }
        for (what, credentials) in [("removed", effect.removed), ("hid", effect.hidden), ("restored", effect.restored), ("updated", effect.updated)] {
            for c in credentials {
                Output.diagnostic("authctl: \(kind.rawValue): \(what) passkey \(Base64URL.encode(c.id)) "
                    + "(\(TerminalText.escaped(c.rpId)), \(TerminalText.shortened(c.userName)))")
            }
        }
    }
}
