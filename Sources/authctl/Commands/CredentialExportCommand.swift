import Glibc
import Session

/// `authctl credential export ID --out FILE`: one passkey, private key included, sealed under a
/// passphrase of its own.
enum CredentialExportCommand {
    static let out = OptionSpec.value("--out", "FILE", "where to write the sealed passkey (a new file, mode 600)", required: true, completion: .files)
    static let passphraseFile = OptionSpec.value(
        "--export-passphrase-file", "FILE", "read the passphrase that seals it from FILE (default $AUTHCTL_EXPORT_PASSPHRASE, else a prompt)",
        completion: .files)

    static let spec = CommandSpec(
        name: "export", abstract: "export one passkey, sealed under a passphrase",
        discussion: """
        The file holds the passkey and its private key, sealed with Argon2id and XChaCha20-Poly1305
        under its own passphrase (docs/vault-format.md, "Exported passkeys"); 'credential import'
        adds it to another vault. A passkey made with user verification asks for the PIN.
        """,
        options: [out, passphraseFile, KDFOption.spec],
        arguments: [CredentialCommand.id],
        examples: ["AUTHCTL_EXPORT_PASSPHRASE='another passphrase' authctl credential export AbCdEfGhIjKlMnOpQrStUw --out alice.passkey"],
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        let id = try CredentialId.decode(args.argument(0) ?? "")
        let path = args.value(out) ?? ""
        let vault = try VaultSelection(args)
        let session = try vault.session(.write)  // a PIN check counts failures
        let device = try session.deviceName(vault.deviceName)
        let passphrase = try SecretSource.read(.transferPassphrase(exporting: true), file: args.value(passphraseFile),
                                               fileOption: passphraseFile.name)
        let sealed = try session.exportPasskey(device: device, credentialId: id, passphrase: passphrase,
                                               kdf: KDFOption.level(args) ?? .interactive)
        try PrivateFile(creating: path).finish(sealed)
        Output.diagnostic("authctl: exported passkey \(args.argument(0) ?? "") to \(path)")
    }
}
