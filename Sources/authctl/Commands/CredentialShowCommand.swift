import Session

/// `authctl credential show ID`: everything the vault knows of one passkey, without its key.
enum CredentialShowCommand {
    static let spec = CommandSpec(
        name: "show", abstract: "show one passkey: algorithm, AAGUID, profile, flags, counter, dates",
        discussion: "Shows no secret and decrypts no private key.",
        arguments: [CredentialCommand.id],
        examples: ["authctl credential show AbCdEfGhIjKlMnOpQrStUw", "authctl --json credential show AbCdEfGhIjKlMnOpQrStUw"],
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        try Output.requireStdout()
        let id = try CredentialId.decode(args.argument(0) ?? "")
        let vault = try VaultSelection(args)
        let credential = try vault.session(.read).passkey(device: vault.deviceName, id: id)
        let d = PasskeyReport(credential)
        if args.flag(GlobalOptions.json) {
            try Output.data(JSONOutput.string(d))
            return
        }
        let rows: [[String]] = [
            ["id", d.id], ["rp id", d.rpId], ["user", "\(d.userName) (\(d.userDisplayName))"], ["user handle", d.userHandle],
            ["created", d.createdAt], ["algorithm", "\(d.algorithm) (\(d.publicKeyAlgorithm))"],
            ["aaguid", d.aaguid ?? "(not recorded)"], ["profile", d.profile ?? "(not recorded)"],
            ["backup", "BE=\(d.backupEligible ? 1 : 0) BS=\(d.backupState ? 1 : 0)\(d.backupStateSetByHand ? " (set by hand)" : "")"],
            ["sign count", "\(d.signCount) (\(d.signCounter))"],
            ["user verification", d.userVerificationRequired ? "required on every use (key sealed under the biometric)" : "as the RP asks"],
            ["credProtect", "level \(d.credProtect)"],
            ["credBlob", d.credBlobBytes.map { "\($0) bytes" } ?? "none"],
            ["large blob", d.largeBlobBytes.map { "\($0) bytes (sealed)" } ?? "none"],
            ["hidden", d.hidden ? "yes: the RP's accepted-credentials signal left it out" : "no"],
        ]
        for line in TextTable.lines(rows) { try Output.text(line) }
    }
}
