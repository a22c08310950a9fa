import Session

/// `authctl device online NAME`: what waited while it was offline starts now.
enum DeviceOnlineCommand {
    static let spec = CommandSpec(
        name: "online", abstract: "bring a device back online: what waited syncs from now", arguments: [DeviceCommand.name],
        run: { args throws(CLIError) in
            try DeviceCommand.change(args, done: "is online", .online)
        })
}
