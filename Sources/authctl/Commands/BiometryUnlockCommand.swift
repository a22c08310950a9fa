/// `authctl biometry unlock`: clears a lockout. The vault passphrase is the proof, as the device
/// passcode is on a phone.
enum BiometryUnlockCommand {
    static let spec = CommandSpec(
        name: "unlock", abstract: "clear a lockout (needs only the vault passphrase)",
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        let device = try VaultSelection(args).open(.write)
        do { try device.unlockBiometry() } catch { throw CLIError(error) }
        Output.diagnostic("authctl: biometry unlocked; failed attempts cleared")
    }
}
