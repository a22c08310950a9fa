import Session

/// `authctl device add NAME`: a new device of the account, its replica empty until sync brings the
/// account's passkeys.
enum DeviceAddCommand {
    static let noBiometry = OptionSpec.flag("--no-biometry", "enroll no PIN on the new device")
    static let approveWith = OptionSpec.value(
        "--approve-with", "DEVICE", "the enrolled device that approves the new one, with its PIN (--pin-file / $AUTHCTL_PIN); default the first enrolled")

    static let vaultDir = OptionSpec.value(
        "--vault-dir", "DIR",
        "make the device in a new vault at DIR (same passphrase) that syncs with this one through the account store alone",
        completion: .directories)

    static let spec = CommandSpec(
        name: "add", abstract: "add a device to the account (its own biometric PIN, approved by an enrolled device)",
        discussion: """
        Every device's PIN wraps the account's one biometry key, so a passkey made with user
        verification on one device works on another with that device's PIN. Adding an enrolled
        device therefore needs an enrolled device's approval: its PIN, as an iPhone asks for another
        device's passcode to join the keychain.

        With --vault-dir DIR the device lives in a new vault of its own at DIR, opened with the same
        passphrase (and --kdf, default interactive): it holds the account's key and the store's
        path, and learns this account's passkeys from the store alone, as a device on another
        machine would. This vault does not list it.
        """,
        options: [noBiometry, NewPINOption.spec, approveWith, InitCommand.maxPINAttempts, vaultDir, KDFOption.spec] + ProfileOptions.all,
        arguments: [DeviceCommand.name],
        examples: ["AUTHCTL_NEW_PIN=5678 authctl device add laptop", "AUTHCTL_NEW_PIN=5678 authctl device add pc --profile windows-hello",
                   "authctl device add --no-biometry desk --vault-dir ~/desk-vault"],
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        // Every option is checked before anything is asked for.
        let aaguid = try ProfileOptions.aaguid(args)
        guard aaguid == nil || args.value(ProfileOptions.profile) != nil else { throw CLIError(.usage, "--aaguid needs --profile on device add") }
        let attempts = try args.integer(InitCommand.maxPINAttempts, in: 1...100).map(UInt32.init) ?? Device.defaultMaxPINAttempts
        let json = args.flag(GlobalOptions.json)
        if json { try Output.requireStdout() }
        let vault = try VaultSelection(args)
        let session = try vault.session(.write)
        let pin = args.flag(noBiometry) ? nil : try NewPINOption.read(args)
        let name = args.argument(0) ?? ""
        if let directory = args.value(vaultDir) {
            guard args.value(ProfileOptions.profile) == nil else { throw CLIError(.usage, "--profile cannot be given with --vault-dir") }
            let passphrase = try vault.passphrase()
            try session.addDevice(name, inNewVaultAt: directory, passphrase: passphrase, kdf: KDFOption.level(args) ?? .interactive,
                                  pin: pin, maxPINAttempts: attempts, approvedBy: args.value(approveWith))
            Output.diagnostic("authctl: added device \(name) in a new vault at \(directory) (biometry \(pin == nil ? "not enrolled" : "enrolled"))")
            // This vault lists it once it published itself in the store: `device list` then shows it.
            return
        }
        guard args.value(KDFOption.spec) == nil else { throw CLIError(.usage, "--kdf is for --vault-dir on device add") }
        try session.addDevice(name, pin: pin, maxPINAttempts: attempts, approvedBy: args.value(approveWith),
                              profile: args.value(ProfileOptions.profile), aaguid: aaguid)
        Output.diagnostic("authctl: added device \(name) (biometry \(pin == nil ? "not enrolled" : "enrolled"))")
        if json { try DeviceCommand.report(name, in: session) }
    }
}
