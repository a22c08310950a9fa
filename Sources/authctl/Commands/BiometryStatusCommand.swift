/// `authctl biometry status`: enrolled, failures, maxAttempts, lockedOut.
enum BiometryStatusCommand {
    static let spec = CommandSpec(
        name: "status", abstract: "show whether a PIN is enrolled, and the failure count",
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        let device = try VaultSelection(args).open(.read)
        try Report.print(device.biometry, json: args.flag(GlobalOptions.json))
    }
}
