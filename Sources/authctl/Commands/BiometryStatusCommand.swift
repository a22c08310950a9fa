import Session

/// `authctl biometry status`: enrolled, failures, maxAttempts, lockedOut.
enum BiometryStatusCommand {
    static let spec = CommandSpec(
        name: "status", abstract: "show whether a PIN is enrolled, and the failure count",
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        let vault = try VaultSelection(args)
        try Report.print(try vault.session(.read).biometry(device: vault.deviceName), json: args.flag(GlobalOptions.json))
    }
}
