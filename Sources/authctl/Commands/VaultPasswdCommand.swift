import Session

/// `authctl vault passwd`: a new passphrase (and KDF level) for the vault.
enum VaultPasswdCommand {
    static let newPassphraseFile = OptionSpec.value(
        "--new-passphrase-file", "FILE", "read the new passphrase from FILE (default $AUTHCTL_NEW_PASSPHRASE, else a prompt)",
        completion: .files)

    static let spec = CommandSpec(
        name: "passwd", abstract: "change the vault passphrase (and KDF level)",
        options: [newPassphraseFile, KDFOption.spec],
        examples: ["AUTHCTL_NEW_PASSPHRASE='another passphrase' authctl vault passwd --kdf moderate"],
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        let session = try VaultSelection(args).session(.write, verifyingFirst: true)
        let new = try SecretSource.read(.newPassphrase, file: args.value(newPassphraseFile), fileOption: newPassphraseFile.name)
        try session.changePassphrase(to: new, kdf: KDFOption.level(args))
        Output.diagnostic("authctl: the vault passphrase was changed")
    }
}
