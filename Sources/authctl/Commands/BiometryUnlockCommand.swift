import Session

/// `authctl biometry unlock`: clears a lockout. The vault passphrase is the proof, as the device
/// passcode is on a phone.
enum BiometryUnlockCommand {
    static let spec = CommandSpec(
        name: "unlock", abstract: "clear a lockout (needs only the vault passphrase)",
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        let vault = try VaultSelection(args)
        let session = try vault.session(.write)
        try session.change(.unlockBiometry, device: try session.deviceName(vault.deviceName))
        Output.diagnostic("authctl: biometry unlocked; failed attempts cleared")
    }
}
