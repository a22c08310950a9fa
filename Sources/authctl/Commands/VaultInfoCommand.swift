import Session

/// `authctl vault info`: facts about the vault (with `--json`, as JSON).
enum VaultInfoCommand {
    static let spec = CommandSpec(
        name: "info", abstract: "show the vault's format, KDF, log and counts",
        examples: ["authctl vault info", "authctl --json vault info"],
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        let vault = try VaultSelection(args)
        try Report.print(try vault.session(.read).vaultReport(device: vault.deviceName), json: args.flag(GlobalOptions.json))
    }
}
