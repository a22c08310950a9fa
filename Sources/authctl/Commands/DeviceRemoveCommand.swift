import Session

/// `authctl device remove NAME`: what it uploaded stays in the account; what it had not is lost.
enum DeviceRemoveCommand {
    static let spec = CommandSpec(
        name: "remove", abstract: "remove a device (not the first) from the account", arguments: [DeviceCommand.name],
        run: { args throws(CLIError) in
            try DeviceCommand.change(args, done: "removed", .remove)
        })
}
