/// `authctl biometry enroll`: a new PIN. With biometry enrolled, the current PIN unlocks the
/// biometry key, which the new PIN then wraps; `--reset`, for a forgotten PIN, makes a new key and
/// deletes the passkeys sealed under the old one.
enum BiometryEnrollCommand {
    static let newPINFile = OptionSpec.value(
        "--new-pin-file", "FILE", "read the new PIN from FILE (default $AUTHCTL_NEW_PIN, else a prompt)", completion: .files)
    static let reset = OptionSpec.flag(
        "--reset", "for a forgotten PIN: a new biometry key; passkeys made with user verification are deleted")

    static let spec = CommandSpec(
        name: "enroll", abstract: "enroll a new biometric PIN (the current one from --pin-file / $AUTHCTL_PIN)",
        options: [newPINFile, reset],
        examples: ["AUTHCTL_NEW_PIN=97531 authctl biometry enroll"],
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        let vault = try VaultSelection(args)
        let device = try vault.open(.write)
        let newPIN = try SecretSource.read(.newPIN, file: args.value(newPINFile), fileOption: newPINFile.name)
        let dropped: Int
        do { dropped = try device.enrollBiometricPIN(newPIN, user: vault.user(), reset: args.flag(reset)) } catch {
            throw CLIError(error)
        }
        Output.diagnostic("authctl: enrolled a new biometric PIN"
            + (args.flag(reset) ? "; deleted \(dropped) passkey(s) sealed under the old enrollment" : ""))
    }
}
