import KeyVault
import Keychain

/// `authctl vault info`: facts about the vault (with `--json`, as JSON).
enum VaultInfoCommand {
    static let spec = CommandSpec(
        name: "info", abstract: "show the vault's format, KDF, log and counts",
        examples: ["authctl vault info", "authctl --json vault info"],
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        let device = try VaultSelection(args).open(.read)
        try Report.print(try VaultReport(device, check: nil), json: args.flag(GlobalOptions.json))
    }
}
