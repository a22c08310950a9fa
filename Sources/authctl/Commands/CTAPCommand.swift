/// `authctl ctap serve`: a device of an account as a USB security key (docs/ctap.md).
enum CTAPCommand {
    static let spec = CommandSpec(
        name: "ctap", abstract: "a device as a USB security key that CTAP2 clients drive (python-fido2, libfido2, OpenSSH)",
        subcommands: [CTAPServeCommand.spec])
}
