/// `authctl credential show | set | export | import`: one passkey, looked at, changed or moved.
enum CredentialCommand {
    static let id = ArgumentSpec(name: "CREDENTIAL_ID", help: "the passkey's base64url credential id (after '--' when it starts with '-')", credentialId: true)

    static let spec = CommandSpec(
        name: "credential", abstract: "show, change, export or import one passkey",
        subcommands: [CredentialShowCommand.spec, CredentialSetCommand.spec, CredentialExportCommand.spec, CredentialImportCommand.spec])
}
