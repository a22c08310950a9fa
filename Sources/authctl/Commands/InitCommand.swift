import KeyVault
import Keychain
import VirtualAuthenticator

/// `authctl init`: creates a vault and enrolls the simulated biometric PIN.
enum InitCommand {
    static let noBiometry = OptionSpec.flag(
        "--no-biometry", "enroll no PIN: user verification is never performed, and 'required' fails with notHandled")
    static let maxPINAttempts = OptionSpec.value(
        "--max-pin-attempts", "N", "consecutive wrong PINs before biometry locks out (1-100, default \(Device.defaultMaxPINAttempts))")

    static let spec = CommandSpec(
        name: "init", abstract: "create a vault and enroll the biometric PIN",
        discussion: "The directory must be absent or empty. The PIN (at least \(Device.minimumPINLength) bytes) comes from --pin-file, $AUTHCTL_PIN or a prompt. The vault holds one account; its first device is named by --device (default 'default'). --profile sets the authenticator every device answers as (default icloud-keychain).",
        options: [KDFOption.spec, noBiometry, maxPINAttempts] + ProfileOptions.all,
        examples: ["AUTHCTL_PASSPHRASE='a long passphrase' AUTHCTL_PIN=1234 authctl init",
                   "authctl --vault ./hello init --profile windows-hello"],
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        let aaguid = try ProfileOptions.aaguid(args)
        let profile = args.value(ProfileOptions.profile) ?? (aaguid == nil ? nil : AuthenticatorProfile.default.name)
        let vault = try VaultSelection(args)
        let level = KDFOption.level(args) ?? .interactive
        let attempts = try args.integer(maxPINAttempts, in: 1...100).map(UInt32.init) ?? Device.defaultMaxPINAttempts
        let passphrase = try SecretSource.read(.firstPassphrase(vault: vault.path), file: vault.passphraseFile,
                                               fileOption: GlobalOptions.passphraseFile.name)
        let pin = args.flag(noBiometry) ? nil
            : try SecretSource.read(.enrolledPIN, file: vault.pinFile, fileOption: GlobalOptions.pinFile.name)
        do {
            let device = try Device.create(at: vault.path, passphrase: passphrase, kdf: level, deviceName: vault.deviceName ?? Device.defaultDeviceName,
                                           biometricPIN: pin, maxPINAttempts: attempts)
            if let profile { try device.account.setProfile(profile, aaguid: aaguid) }
        } catch { throw CLIError(error) }
        Output.diagnostic("authctl: created vault at \(vault.path) (kdf \(level.rawValue), biometry \(pin == nil ? "not enrolled" : "enrolled"))")
    }
}
