import Session

/// `authctl register`: navigator.credentials.create() from the shell.
enum RegisterCommand {
    static let deviceBound = OptionSpec.flag(
        "--device-bound", "the new passkey is not backup eligible (BE=0, BS=0) instead of a synced one (BE=1, BS=1)")
    static let signCounter = OptionSpec.flag(
        "--sign-counter", "the new passkey counts its signatures (1, 2, 3, …) instead of always reporting 0")
    // Without --options, these build the options (random where absent).
    static let rpId = OptionSpec.value("--rp-id", "ID", "built options: the RP ID (default: the origin's host)")
    static let userName = OptionSpec.value("--user-name", "NAME", "built options: user.name (default user)", allowsEmpty: true)
    static let userId = OptionSpec.value("--user-id", "B64URL", "built options: user.id (default 16 random bytes)")
    static let displayName = OptionSpec.value(
        "--display-name", "NAME", "built options: user.displayName (default the user name)", allowsEmpty: true)
    static let challenge = OptionSpec.value("--challenge", "B64URL", "built options: the challenge (default 32 random bytes)")
    static let attestation = OptionSpec.value(
        "--attestation", "CONVEYANCE", "built options: attestation (default none)", choices: ["none", "indirect", "direct", "enterprise"])
    static let algorithm = OptionSpec.value(
        "--alg", "ALG", "built options: an algorithm for pubKeyCredParams, in order (repeatable; es256, eddsa, rs256 or a COSE number; default es256 rs256)",
        repeatable: true)
    static let counter = OptionSpec.value(
        "--counter", "MODE", "how the new passkey's sign counter moves, instead of the profile's", choices: SignCounter.allCases.map(\.rawValue))
    static let noUserActivation = OptionSpec.flag(
        "--no-user-activation", "with --top-origin: no click in the iframe just before (a cross-origin create is NotAllowedError)")
    static let recentPasswordSignIn = OptionSpec.flag(
        "--recent-password-sign-in", "with --mediation conditional: the password manager just signed this user in with a password")
    static let u2f = OptionSpec.flag("--u2f", "answer attestation as a U2F device (fido-u2f; the security-key profile)")
    static let enterpriseRP = OptionSpec.value(
        "--enterprise-rp", "ID", "permit enterprise attestation for this RP ID (repeatable): attestation \"enterprise\" then gets the profile's attestation and AAGUID; for other RP IDs it is answered as none with a zero AAGUID",
        repeatable: true)
    static let via = OptionSpec.value(
        "--via", "DEVICE", "register on another device of the account over hybrid (as a phone does for a laptop's page): its PIN, its store; the response says cross-platform")
    static let exclude = OptionSpec.value("--exclude", "ID", "built options: a credential id for excludeCredentials (repeatable)", repeatable: true)

    static let spec = CommandSpec(
        name: "register", abstract: "create a passkey: navigator.credentials.create() from the shell",
        discussion: """
        Reads PublicKeyCredentialCreationOptionsJSON (also wrapped as {"publicKey": …}) from --options,
        or builds it from the flags, and prints RegistrationResponseJSON on stdout.
        """,
        options: CeremonyOptions.all + ProfileOptions.all + [u2f, noUserActivation, recentPasswordSignIn, deviceBound, signCounter, counter, enterpriseRP, algorithm, rpId, userName, userId, displayName, challenge, attestation,
                                        CeremonyOptions.userVerification, exclude, via],
        examples: [
            "authctl register --origin https://example.com --user-name alice --attestation direct > reg.json",
            "curl -s https://rp.test/register/begin | authctl register --origin https://rp.test --options -",
            "authctl register --origin https://example.com --profile windows-hello --attestation direct --alg rs256 --alg es256",
        ],
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        let passkey = PasskeySettings(deviceBound: args.flag(deviceBound), signatureCounter: args.flag(signCounter),
                                      profile: args.value(ProfileOptions.profile), aaguid: try ProfileOptions.aaguid(args), u2f: args.flag(u2f),
                                      counter: args.value(counter).flatMap(SignCounter.init(rawValue:)),
                                      enterpriseRelyingParties: try enterpriseRelyingParties(args))
        var algorithms = [Int]()
        for name in args.values(algorithm) {
            guard let number = COSEAlgorithm(name: name)?.rawValue ?? Int(name) else {
                throw CLIError(.usage, "--alg must be es256, eddsa, rs256 or a COSE algorithm number, got '\(EchoedInput.text(name))'")
            }
            algorithms.append(number)
        }
        let builtAlgorithms = algorithms.isEmpty ? [COSEAlgorithm.es256.rawValue, COSEAlgorithm.rs256.rawValue] : algorithms
        let caller = try CeremonyOptions.caller(args, userActivation: !args.flag(noUserActivation),
                                                recentPasswordSignIn: args.flag(recentPasswordSignIn))
        try CeremonyOptions.perform(args) { given, vault throws(CLIError) in
            let options: OptionsSource<CreationOptionsBuilder> = if let given { .json(given) } else { .built(try builder(args, algorithms: builtAlgorithms)) }
            return .register(RegisterRequest(device: vault.deviceName, via: args.value(via), caller: caller, options: options,
                                             person: try CeremonyOptions.person(args), passkey: passkey, fault: CeremonyOptions.fault(args)))
        }
    }

    /// `--enterprise-rp` values: RP IDs, in the form the client compares (lower-case ASCII, A-labels).
    static func enterpriseRelyingParties(_ args: ParsedArguments) throws(CLIError) -> [String] {
        var ids = [String]()
        for text in args.values(enterpriseRP) {
            guard let ascii = try? RelyingPartyIdentifier.ascii(text), RelyingPartyIdentifier.isWellFormed(ascii) else {
                throw CLIError(.usage, "--enterprise-rp must be a domain (an RP ID), got '\(EchoedInput.text(text))'")
            }
            ids.append(ascii)
        }
        return ids
    }

    /// PublicKeyCredentialCreationOptionsJSON, as much of it as the flags build.
    static func builder(_ args: ParsedArguments, algorithms: [Int]) throws(CLIError) -> CreationOptionsBuilder {
        var excluded = [[UInt8]]()
        for id in args.values(exclude) { excluded.append(try CredentialId.decode(id, "--exclude")) }
        return CreationOptionsBuilder(
            rpId: CeremonyOptions.builtRPId(args.value(rpId)),
            userId: try args.value(userId).map { v throws(CLIError) in try CeremonyOptions.builtBase64URL(v, "--user-id") },
            userName: args.value(userName) ?? "user", displayName: args.value(displayName),
            challenge: try args.value(challenge).map { v throws(CLIError) in try CeremonyOptions.builtBase64URL(v, "--challenge") },
            algorithms: algorithms, attestation: args.value(attestation) ?? "none",
            userVerification: args.value(CeremonyOptions.userVerification) ?? "preferred", exclude: excluded)
    }
}
