import Glibc
import Session

/// The vault a command works on, and the secrets that open and use it: the global options, with
/// their environment defaults.
struct VaultSelection {
    let path: String
    let passphraseFile: String?
    let pinFile: String?
    let waitSeconds: Int
    /// `--device` or `$AUTHCTL_DEVICE`; `nil`: the first device.
    let deviceName: String?

    init(_ args: ParsedArguments) throws(CLIError) {
        if let given = args.value(GlobalOptions.vault) { path = given } else { path = try Self.defaultPath() }
        passphraseFile = args.value(GlobalOptions.passphraseFile)
        pinFile = args.value(GlobalOptions.pinFile)
        waitSeconds = try args.integer(GlobalOptions.wait, in: 0...86_400) ?? GlobalOptions.defaultWaitSeconds
        deviceName = args.value(GlobalOptions.device) ?? EnvironmentVariable.device.value.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// `$AUTHCTL_VAULT`, else `$XDG_DATA_HOME/authctl` (an absolute one, as the XDG spec says), else
    /// `~/.local/share/authctl` — home from `$HOME`, else the user database. Never the current
    /// directory by accident.
    static func defaultPath() throws(CLIError) -> String {
        if let v = EnvironmentVariable.vault.value, !v.isEmpty { return v }
        if let xdg = EnvironmentVariable.xdgDataHome.value, xdg.hasPrefix("/") { return xdg + "/authctl" }
        if let home = EnvironmentVariable.home.value, home.hasPrefix("/") { return home + "/.local/share/authctl" }
        if let entry = getpwuid(geteuid()), let dir = entry.pointee.pw_dir.map({ String(cString: $0) }), dir.hasPrefix("/") {
            return dir + "/.local/share/authctl"
        }
        throw CLIError(.usage, "no home directory to keep the vault in: set AUTHCTL_VAULT or pass --vault DIR")
    }

    /// While another process holds the vault: say so once, and wait up to `--wait`.
    var waiting: Session.Waiting {
        Session.Waiting(limit: .seconds(waitSeconds)) { [path, waitSeconds] in
            Output.diagnostic("authctl: waiting for the vault at \(EchoedInput.path(path)): another authctl process is using it "
                + "(waiting up to \(waitSeconds) s; see --wait)")
        }
    }

    func passphrase() throws(CLIError) -> SecureBytes {
        try SecretSource.read(.passphrase(vault: path), file: passphraseFile, fileOption: GlobalOptions.passphraseFile.name)
    }

    /// The biometric PIN, read only when the sensor asks for it. Its failures travel through the
    /// device as the ceremony outcome of the same name (`notInteractive`, `canceled` at an
    /// interrupted prompt, `badInput` for an unreadable file), and come out as they went in.
    func pin(_ prompt: UserPrompt) throws(AuthenticatorError) -> SecureBytes {
        do {
            return try SecretSource.read(.pin(rpId: prompt.rpId, userName: prompt.userName), file: pinFile,
                                         fileOption: GlobalOptions.pinFile.name)
        } catch { throw AuthenticatorError(error) }
    }

    /// Opens the account (``Session/open(at:passphrase:access:verifyingFirst:waiting:people:clock:)``),
    /// asking for the passphrase only once there is a vault to open; its people are the person at
    /// the terminal. With `verifyingFirst` (a writer that reads the whole vault: `vault compact`,
    /// `vault passwd`, `sync rebuild`), a damaged vault fails having written nothing. What the
    /// store checks found on the way is said on stderr, each once.
    func session(_ access: Vault.Access, verifyingFirst: Bool = false) throws(CLIError) -> Session {
        let session = try session(access, verifyingFirst: verifyingFirst, people: TerminalPeople(self))
        Self.warn(session)
        return session
    }

    /// The same with other `people` (`serve --vault`'s), the warnings left for that front end.
    func session(_ access: Vault.Access, verifyingFirst: Bool = false, people: any People) throws(CLIError) -> Session {
        do { try Session.requireVault(at: path) } catch where error.name == .vaultNotFound {
            throw CLIError(.vaultNotFound, "no vault at \(EchoedInput.path(path)); create one with 'authctl init' (or choose one with --vault)")
        }
        return try Session.open(at: path, passphrase: try passphrase(), access: access, verifyingFirst: verifyingFirst,
                                waiting: waiting, people: people)
    }

    /// The warnings `session` has not said yet, on stderr.
    static func warn(_ session: Session) {
        for warning in session.takeWarnings() { Output.diagnostic("authctl: warning: \(TerminalText.escaped(warning))") }
    }
}
