/// `authctl vault info | check | compact | passwd`: looking after the vault itself.
enum VaultCommand {
    static let spec = CommandSpec(
        name: "vault", abstract: "look after the vault itself",
        subcommands: [VaultInfoCommand.spec, VaultCheckCommand.spec, VaultCompactCommand.spec, VaultPasswdCommand.spec])
}
