import Session

/// `authctl credential set ID --backup-state 0|1`: a passkey's backup flags, set by hand.
enum CredentialSetCommand {
    static let backupState = OptionSpec.value("--backup-state", "0|1", "the BS flag (sync no longer decides it)", choices: ["0", "1"], required: true)
    static let backupEligible = OptionSpec.value("--backup-eligible", "0|1", "the BE flag too", choices: ["0", "1"])

    static let spec = CommandSpec(
        name: "set", abstract: "set a passkey's backup flags (BE, BS) by hand",
        discussion: """
        As WebDriver's virtual authenticators allow: from now on every response for this passkey
        carries these flags. BS is never 1 without BE. The change syncs to the account's devices.
        """,
        options: [backupState, backupEligible],
        arguments: [CredentialCommand.id],
        examples: ["authctl credential set AbCdEfGhIjKlMnOpQrStUw --backup-state 0"],
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        let id = try CredentialId.decode(args.argument(0) ?? "")
        let vault = try VaultSelection(args)
        let changed = try vault.session(.write).setBackupFlags(device: vault.deviceName, credentialId: id,
                                                               eligible: args.value(backupEligible).map { $0 == "1" },
                                                               state: args.value(backupState) == "1")
        Output.diagnostic("authctl: passkey \(args.argument(0) ?? "") now BE=\(changed.backupEligible ? 1 : 0) BS=\(changed.backupState ? 1 : 0)")
    }
}
