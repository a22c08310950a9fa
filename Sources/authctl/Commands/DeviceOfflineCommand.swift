import Session

/// `authctl device offline NAME`: nothing uploads from or downloads to it until it is back online.
enum DeviceOfflineCommand {
    static let spec = CommandSpec(
        name: "offline", abstract: "take a device offline: its sync waits", arguments: [DeviceCommand.name],
        run: { args throws(CLIError) in
            try DeviceCommand.change(args, done: "is offline", .offline)
        })
}
