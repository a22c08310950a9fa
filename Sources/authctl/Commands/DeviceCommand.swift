import Session

/// `authctl device add | approve | list | remove | offline | online | reset`: the account's devices.
enum DeviceCommand {
    static let spec = CommandSpec(
        name: "device", abstract: "the account's devices: add, approve one joining from another machine, list, remove, take offline or online, factory-reset, switch passkey support",
        subcommands: [DeviceAddCommand.spec, DeviceApproveCommand.spec, DeviceListCommand.spec, DeviceRemoveCommand.spec, DeviceOfflineCommand.spec,
                      DeviceOnlineCommand.spec, DeviceResetCommand.spec, DeviceUnsupportedCommand.spec])

    static let name = ArgumentSpec(name: "NAME", help: "the device's name")

    /// Opens the account and runs `change` on it, then says `done` on stderr; with `--json`, the
    /// device as it is after the change on stdout (a removed one has nothing to show).
    static func change(_ args: ParsedArguments, done: String, _ change: DeviceChange) throws(CLIError) {
        let json = args.flag(GlobalOptions.json) && change != .remove
        if json { try Output.requireStdout() }
        let session = try VaultSelection(args).session(.write)
        let name = args.argument(0) ?? ""
        try session.change(change, device: name)
        Output.diagnostic("authctl: device \(name) \(done)")
        if json { try report(name, in: session) }
    }

    /// Device `name` as every front end reports it (docs/reports.md, "Device"), on stdout.
    static func report(_ name: String, in session: Session) throws(CLIError) {
        try Output.data(JSONOutput.string(try session.deviceReport(name)))
    }
}
