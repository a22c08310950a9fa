/// `authctl ca export`: the vault's attestation CA, for RPs to trust.
enum CACommand {
    static let spec = CommandSpec(
        name: "ca", abstract: "the attestation CA whose root RP tests trust",
        subcommands: [CAExportCommand.spec])
}
