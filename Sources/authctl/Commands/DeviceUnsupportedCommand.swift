import Session

/// `authctl device unsupported NAME on|off`: a device without passkey support, or with it again.
enum DeviceUnsupportedCommand {
    static let spec = CommandSpec(
        name: "unsupported", abstract: "switch a device's lack of passkey support on (a browser without WebAuthn) or off",
        discussion: """
        While on, every capability of the device is false and register, sign (also as either side of
        --via) and signal fail with passkeysNotSupported (NotSupportedError). Its passkeys stay, and
        sync goes on.
        """,
        arguments: [DeviceCommand.name, ArgumentSpec(name: "STATE", help: "on: no passkey support; off: supported again",
                                                     choices: ["on", "off"])],
        examples: ["authctl device unsupported laptop on", "authctl device unsupported laptop off"],
        run: { args throws(CLIError) in
            let on = args.argument(1) == "on"
            try DeviceCommand.change(args, done: on ? "has no passkey support" : "supports passkeys", .passkeysSupported(!on))
        })
}
