import Session

/// `authctl device reset NAME`: a factory reset.
enum DeviceResetCommand {
    static let spec = CommandSpec(
        name: "reset", abstract: "factory-reset a device: its replica and PIN are gone until sync and re-enrollment",
        discussion: """
        What the device had not uploaded is lost; the account's passkeys come back as sync delivers
        them. Enroll a PIN again with 'authctl biometry enroll --device NAME' (an enrolled device approves).
        """,
        arguments: [DeviceCommand.name],
        run: { args throws(CLIError) in
            try DeviceCommand.change(args, done: "was reset", .reset)
        })
}
