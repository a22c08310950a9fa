import Keychain

/// `authctl device add | list | remove | offline | online | reset`: the account's devices.
enum DeviceCommand {
    static let spec = CommandSpec(
        name: "device", abstract: "the account's devices: add, list, remove, take offline or online, factory-reset, switch passkey support",
        subcommands: [DeviceAddCommand.spec, DeviceListCommand.spec, DeviceRemoveCommand.spec, DeviceOfflineCommand.spec,
                      DeviceOnlineCommand.spec, DeviceResetCommand.spec, DeviceUnsupportedCommand.spec])

    static let name = ArgumentSpec(name: "NAME", help: "the device's name")

    /// Opens the account and runs `change` on it, then says `done` on stderr.
    static func change(_ args: ParsedArguments, done: String,
                       _ change: (Account, String) throws(DeviceError) -> Void) throws(CLIError) {
        let account = try VaultSelection(args).openAccount(.write)
        let name = args.argument(0) ?? ""
        do { try change(account, name) } catch { throw CLIError(error) }
        Output.diagnostic("authctl: device \(name) \(done)")
    }
}
