import Session

/// `authctl init`: creates a vault and enrolls the simulated biometric PIN.
enum InitCommand {
    static let noBiometry = OptionSpec.flag(
        "--no-biometry", "enroll no PIN: user verification is never performed, and 'required' fails with notHandled")
    static let maxPINAttempts = OptionSpec.value(
        "--max-pin-attempts", "N", "consecutive wrong PINs before biometry locks out (1-100, default \(Device.defaultMaxPINAttempts))")

    static let store = OptionSpec.value(
        "--store", "STORE",
        "make the account on this store, shared from the start: a postgresql:// address (#NAME picks one of the database's accounts) or a directory from the root ($AUTHCTL_STORE)")
    static let join = OptionSpec.value(
        "--join", "STORE", "join the account on this store as a new device: approved on an enrolled device (device approve CODE), or with --recovery; give the server's password in $PGPASSWORD or ~/.pgpass, not in STORE (other users see it while this waits)")
    static let recovery = OptionSpec.flag(
        "--recovery", "with --join: join with the account's recovery secret (--recovery-file, $AUTHCTL_RECOVERY_SECRET or a prompt) instead of an approval")
    static let recoveryFile = OptionSpec.value(
        "--recovery-file", "FILE", "with --store: write the new account's recovery secret to FILE (created, mode 0600) instead of stdout; with --join --recovery: read it from FILE",
        completion: .files)
    static let wait = OptionSpec.value(
        "--approval-timeout", "DURATION", "with --join: how long to wait for an enrolled device's approval (default 10m)")

    static let spec = CommandSpec(
        name: "init", abstract: "create a vault and enroll the biometric PIN",
        discussion: "The directory must be absent or empty. The PIN (at least \(Device.minimumPINLength) bytes) comes from --pin-file, $AUTHCTL_PIN or a prompt. The vault holds one account; its first device is named by --device (default 'default'). --profile sets the authenticator every device answers as (default icloud-keychain).",
        options: [KDFOption.spec, noBiometry, maxPINAttempts, store, join, recovery, recoveryFile, wait] + ProfileOptions.all,
        examples: ["AUTHCTL_PASSPHRASE='a long passphrase' AUTHCTL_PIN=1234 authctl init",
                   "authctl --vault ./hello init --profile windows-hello",
                   "authctl init --store postgresql://db.example/keys#alice --device phone --recovery-file ~/alice.recovery",
                   "authctl init --join postgresql://db.example/keys#alice --device laptop   # prints a code; on the phone: authctl device approve CODE"],
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
        if let address = args.value(join) {
            guard profile == nil else { throw CLIError(.usage, "--profile cannot be given with --join: the device answers as the account's devices do") }
            try joinAccount(address, args: args, vault: vault, passphrase: passphrase, pin: pin, kdf: level, attempts: attempts)
            return
        }
        guard !args.flag(recovery), args.value(wait) == nil else { throw CLIError(.usage, "--recovery and --approval-timeout are for init --join") }
        if let address = args.value(store) ?? EnvironmentVariable.store.value.flatMap({ $0.isEmpty ? nil : $0 }) {
            try createShared(address, args: args, vault: vault, passphrase: passphrase, pin: pin, kdf: level, attempts: attempts, profile: profile,
                             aaguid: aaguid)
            return
        }
        guard args.value(recoveryFile) == nil else { throw CLIError(.usage, "--recovery-file is for init --store or init --join --recovery") }
        _ = try Session.create(AccountSpec(path: vault.path, passphrase: passphrase, kdf: level,
                                           devices: [AccountSpec.DeviceSpec(name: vault.deviceName ?? Device.defaultDeviceName, pin: pin,
                                                                            maxPINAttempts: attempts)],
                                           profile: profile, aaguid: aaguid))
        Output.diagnostic("authctl: created vault at \(vault.path) (kdf \(level.rawValue), biometry \(pin == nil ? "not enrolled" : "enrolled"))")
    }

    /// `init --store`: a new account on a shared store, and its recovery secret.
    private static func createShared(_ address: String, args: ParsedArguments, vault: VaultSelection, passphrase: SecureBytes,
                                     pin: SecureBytes?, kdf: KDFLevel, attempts: UInt32, profile: String?, aaguid: [UInt8]?) throws(CLIError) {
        let file = try args.value(recoveryFile).map { path throws(CLIError) in try PrivateFile(creating: path) }
        if file == nil { try Output.requireStdout() }
        // On stdout once the store is claimed, before anything is made: a secret that cannot be
        // shown leaves no account behind, and a store that cannot be used never shows one.
        var store = AccountSpec.SharedStore(address: address)
        if file == nil { store.show = showSecret }
        let secret = store.recoverySecret
        do {
            _ = try Session.create(AccountSpec(path: vault.path, passphrase: passphrase, kdf: kdf,
                                               devices: [AccountSpec.DeviceSpec(name: vault.deviceName ?? Device.defaultDeviceName, pin: pin,
                                                                                maxPINAttempts: attempts)],
                                               profile: profile, aaguid: aaguid, store: store))
        } catch {
            file?.abandon()
            throw error
        }
        try file?.finish(Array((secret + "\n").utf8))
        Output.diagnostic("authctl: created vault at \(vault.path) on the account store \(StoreAddress.shown(address)) (kdf \(kdf.rawValue), biometry \(pin == nil ? "not enrolled" : "enrolled")); "
                          + "the recovery secret is \(file.map { "in \($0.path)" } ?? "above"): keep it, it is not shown again")
    }

    /// The recovery secret, on stdout.
    @Sendable private static func showSecret(_ secret: String) throws(SessionError) { try Output.text(secret) }

    /// `init --join`: a device of an account on a shared store, approved by an enrolled device or
    /// by the recovery secret.
    private static func joinAccount(_ address: String, args: ParsedArguments, vault: VaultSelection, passphrase: SecureBytes,
                                    pin: SecureBytes?, kdf: KDFLevel, attempts: UInt32) throws(CLIError) {
        guard args.value(store) == nil else { throw CLIError(.usage, "--store and --join are two ways to start: give one") }
        guard let name = vault.deviceName else { throw CLIError(.usage, "init --join needs --device NAME: the joining device's name in the account") }
        let approval: Session.JoinApproval
        if args.flag(recovery) {
            guard args.value(wait) == nil else { throw CLIError(.usage, "--approval-timeout is for joining by approval, not --recovery") }
            approval = .recoverySecret { () throws(SessionError) in
                let secret = try SecretSource.read(.recoverySecret, file: args.value(recoveryFile), fileOption: recoveryFile.name)
                return secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
            }
        } else {
            guard args.value(recoveryFile) == nil else { throw CLIError(.usage, "--recovery-file with --join needs --recovery") }
            var timeout = Duration.seconds(600)
            if let text = args.value(wait) {
                guard let range = DelayRange(parsing: text), range.lower == range.upper else {
                    throw CLIError(.usage, "--approval-timeout takes a duration like 30s, 2m or 1h, not '\(EchoedInput.text(text))'")
                }
                timeout = .milliseconds(Int64(range.lower))
            }
            approval = .approval(timeout: timeout, shown: { code throws(SessionError) in
                try Output.text(code)
                Output.diagnostic("authctl: to add \(name) to the account, run on an enrolled device: authctl device approve \(code)")
            }, stop: { Interruption.isUnderway })
            try Output.requireStdout()
            // The address stays in this process's arguments, which every user of the machine can
            // read, for as long as it waits.
            if StoreAddress.carriesPassword(address) {
                Output.diagnostic("authctl: warning: the store's address holds a password, which other users of this machine can read "
                                  + "in the process list while init --join waits: give it in $PGPASSWORD or a password file "
                                  + "(~/.pgpass, $PGPASSFILE) instead")
            }
            // Ctrl-C, SIGTERM or a hang-up while it waits: the request is withdrawn (the wait
            // notices within a second) and the command ends as canceled.
            Interruption.onSignal(json: args.flag(GlobalOptions.json), done: "the join request was withdrawn") {}
        }
        defer { Interruption.parkIfUnderway() }
        let session = try Session.join(at: vault.path, passphrase: passphrase, kdf: kdf, store: address, name: name, pin: pin,
                                       maxPINAttempts: attempts, approval: approval)
        VaultSelection.warn(session)
        Output.diagnostic("authctl: created vault at \(vault.path) for device \(name), joined to the account on \(StoreAddress.shown(address))")
    }
}
