import Session

/// `authctl vault check`: opening authenticates every frame; this also opens every private key that
/// is not sealed under the biometry key and matches it to its public key.
enum VaultCheckCommand {
    static let spec = CommandSpec(
        name: "check", abstract: "open every sealed private key and match it to its public key",
        discussion: "Problems are listed on stderr and the command fails with vaultCorrupted (exit 21).",
        examples: ["authctl --json vault check"],
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        let vault = try VaultSelection(args)
        try Report.print(try vault.session(.read).checkVault(device: vault.deviceName), json: args.flag(GlobalOptions.json))
    }
}
