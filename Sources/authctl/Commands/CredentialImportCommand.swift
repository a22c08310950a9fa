import Foundation
import Session

/// `authctl credential import FILE`: adds an exported passkey to this device.
enum CredentialImportCommand {
    static let spec = CommandSpec(
        name: "import", abstract: "import a passkey exported by 'credential export'",
        discussion: """
        The passkey keeps its credential id and key pair, so an RP that knows it accepts its
        assertions from this vault. The same id already here is refused; another passkey of the
        same RP and user is replaced, as a registration replaces it.
        """,
        options: [CredentialExportCommand.passphraseFile],
        arguments: [ArgumentSpec(name: "FILE", help: "a file 'credential export' wrote")],
        examples: ["AUTHCTL_EXPORT_PASSPHRASE='another passphrase' authctl --vault ./other credential import alice.passkey"],
        run: run)

    /// Above the largest export: a passkey's names come from options of at most 1 MiB.
    static let fileLimit = 4 << 20

    static func run(_ args: ParsedArguments) throws(CLIError) {
        let path = args.argument(0) ?? ""
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
              let handle = FileHandle(forReadingAtPath: path) else {
            throw CLIError(.badInput, "cannot read \(EchoedInput.path(path)): not a readable file")
        }
        let data: Data
        do { data = try handle.read(upToCount: fileLimit + 1) ?? Data() } catch { throw CLIError(.badInput, "cannot read \(EchoedInput.path(path))") }
        guard data.count <= fileLimit else { throw CLIError(.badInput, "\(EchoedInput.path(path)) is larger than an exported passkey can be") }
        let vault = try VaultSelection(args)
        let session = try vault.session(.write)
        let device = try session.deviceName(vault.deviceName)
        let passphrase = try SecretSource.read(.transferPassphrase(exporting: false), file: args.value(CredentialExportCommand.passphraseFile),
                                               fileOption: CredentialExportCommand.passphraseFile.name)
        let credential = try session.importPasskey(device: device, Array(data), passphrase: passphrase)
        Output.diagnostic("authctl: imported passkey \(Base64URL.encode(credential.id)) (\(credential.rpId), \(credential.userName))")
    }
}
