import Session

/// `authctl delete ID`: removes one passkey (a tombstone in the vault).
enum DeleteCommand {
    static let spec = CommandSpec(
        name: "delete", abstract: "delete a passkey",
        arguments: [ArgumentSpec(name: "CREDENTIAL_ID", help: "the passkey's base64url credential id (after '--' when it starts with '-')", credentialId: true)],
        examples: ["authctl delete AbCdEfGhIjKlMnOpQrStUw", "authctl delete -- -bCdEfGhIjKlMnOpQrStUw"],
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        let id = try CredentialId.decode(args.argument(0) ?? "")
        let vault = try VaultSelection(args)
        let deleted = try vault.session(.write).delete(device: vault.deviceName, credentialId: id)
        Output.diagnostic("authctl: deleted passkey \(args.argument(0) ?? "") (\(deleted.rpId), \(deleted.userName))")
    }
}
