import Session

/// `authctl biometry enroll`: a new PIN. With biometry enrolled, the current PIN unlocks the
/// biometry key, which the new PIN then wraps; `--reset`, for a forgotten PIN, makes a new key and
/// deletes the passkeys sealed under the old one.
enum BiometryEnrollCommand {
    static let reset = OptionSpec.flag(
        "--reset", "for a forgotten PIN: a new biometry key; passkeys made with user verification are deleted")

    static let approveWith = OptionSpec.value(
        "--approve-with", "DEVICE", "on a device with no PIN: the enrolled device that approves, with its PIN (--pin-file / $AUTHCTL_PIN)")

    static let spec = CommandSpec(
        name: "enroll", abstract: "enroll a new biometric PIN (the current one from --pin-file / $AUTHCTL_PIN)",
        discussion: """
        The PIN from --pin-file / $AUTHCTL_PIN is, in turn: this device's current PIN; on a
        factory-reset device, its former PIN (the account's biometry key comes back with it);
        on a device with no PIN, that of the enrolled device that approves (--approve-with, default
        the first enrolled). Only with no device enrolled, or --reset with no other device
        enrolled, is a new biometry key made.
        """,
        options: [NewPINOption.spec, approveWith, reset],
        examples: ["AUTHCTL_NEW_PIN=97531 authctl biometry enroll",
                   "AUTHCTL_PIN=4242 AUTHCTL_NEW_PIN=1357 authctl --device laptop biometry enroll --approve-with phone"],
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        let vault = try VaultSelection(args)
        let session = try vault.session(.write)
        let device = try session.deviceName(vault.deviceName)
        let newPIN = try NewPINOption.read(args)
        let dropped = try session.enrollPIN(newPIN, device: device, reset: args.flag(reset), approvedBy: args.value(approveWith))
        Output.diagnostic("authctl: enrolled a new biometric PIN"
            + (args.flag(reset) ? "; deleted \(dropped) passkey(s) sealed under the old enrollment" : ""))
    }
}
