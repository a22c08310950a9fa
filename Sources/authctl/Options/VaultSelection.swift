import Glibc
import KeyVault
import Keychain
import VirtualAuthenticator

/// The vault a command works on, and the secrets that open and use it: the global options, with
/// their environment defaults.
struct VaultSelection {
    let path: String
    let passphraseFile: String?
    let pinFile: String?

    init(_ args: ParsedArguments) {
        path = args.value(GlobalOptions.vault) ?? Self.defaultPath()
        passphraseFile = args.value(GlobalOptions.passphraseFile)
        pinFile = args.value(GlobalOptions.pinFile)
    }

    /// `$AUTHCTL_VAULT`, else `$XDG_DATA_HOME/authctl`, else `~/.local/share/authctl`.
    static func defaultPath() -> String {
        if let v = environment("AUTHCTL_VAULT"), !v.isEmpty { return v }
        if let xdg = environment("XDG_DATA_HOME"), xdg.hasPrefix("/") { return xdg + "/authctl" }
        return (environment("HOME") ?? ".") + "/.local/share/authctl"
    }

    func passphrase() throws(CLIError) -> SecureBytes {
        try SecretSource.read(.passphrase(vault: path), file: passphraseFile, fileOption: GlobalOptions.passphraseFile.name)
    }

    /// The biometric PIN, read only when the sensor asks for it. Its failures travel through the
    /// device in the command line's own words.
    func pin(_ prompt: UserPrompt) throws(AuthenticatorError) -> SecureBytes {
        do {
            return try SecretSource.read(.pin(rpId: prompt.rpId, userName: prompt.userName), file: pinFile,
                                         fileOption: GlobalOptions.pinFile.name)
        } catch {
            throw AuthenticatorError(error.name == .notInteractive ? .notInteractive : .unknown, error.message, underlying: error)
        }
    }

    /// Opens the device, asking for the passphrase only once there is a vault to open.
    func open(_ access: Vault.Access) throws(CLIError) -> Device {
        guard Device.exists(at: path) else {
            throw CLIError(.vaultNotFound, "no vault at \(path); create one with 'authctl init' (or choose one with --vault)")
        }
        let secret = try passphrase()
        do { return try Device.open(at: path, passphrase: secret, access: access) } catch { throw CLIError(error) }
    }

    /// The person at the device: this vault's PIN source, and what the command line says they do.
    func user(action: UserAction = .approve, account: AccountChoice = .newest, instantTimeout: Bool = false) -> UserPolicy {
        UserPolicy(action: action, account: account, pin: { prompt throws(AuthenticatorError) in try pin(prompt) },
                   wait: instantTimeout ? { _ in } : UserPolicy.sleep)
    }
}

func environment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
