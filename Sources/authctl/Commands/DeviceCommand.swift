import Session

/// `authctl device add | approve | list | remove | offline | online | reset`: the account's devices.
enum DeviceCommand {
    static let spec = CommandSpec(
        name: "device", abstract: "the account's devices: add, approve one joining from another machine, list, remove, take offline or online, factory-reset, switch passkey support",
        subcommands: [DeviceAddCommand.spec, DeviceApproveCommand.spec, DeviceListCommand.spec, DeviceRemoveCommand.spec, DeviceOfflineCommand.spec,
                      DeviceOnlineCommand.spec, DeviceResetCommand.spec, DeviceUnsupportedCommand.spec])

    static let name = ArgumentSpec(name: "NAME", help: "the device's name")

    /// Opens the account and runs `change` on it, then says `done` on stderr.
    static func change(_ args: ParsedArguments, done: String, _ change: DeviceChange) throws(CLIError) {
        let session = try VaultSelection(args).session(.write)
        let name = args.argument(0) ?? ""
        try session.change(change, device: name)
        Output.diagnostic("authctl: device \(name) \(done)")
    }
}
