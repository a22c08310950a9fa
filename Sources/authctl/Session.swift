import Glibc
import KeyVault
import VirtualAuthenticator

/// The options every vault command shares, and opening the vault they point at.
struct VaultOptions {
    var path: String
    var passphraseFile: String?
    var pinFile: String?

    init(_ args: inout Arguments) throws(AuthenticatorError) {
        path = try args.value("--vault") ?? Self.defaultPath()
        passphraseFile = try args.value("--passphrase-file")
        pinFile = try args.value("--pin-file")
    }

    /// `$AUTHCTL_VAULT`, else `$XDG_DATA_HOME/authctl`, else `~/.local/share/authctl`.
    static func defaultPath() -> String {
        if let v = environment("AUTHCTL_VAULT"), !v.isEmpty { return v }
        if let xdg = environment("XDG_DATA_HOME"), xdg.hasPrefix("/") { return xdg + "/authctl" }
        return (environment("HOME") ?? ".") + "/.local/share/authctl"
    }

    func passphrase() throws(AuthenticatorError) -> SecureBytes {
        guard let secret = try SecretSource.read(file: passphraseFile, environment: "AUTHCTL_PASSPHRASE",
                                                 prompt: "Vault passphrase for \(path): ")
        else {
            throw AuthenticatorError(.notInteractive,
                "the vault needs its passphrase: set AUTHCTL_PASSPHRASE, pass --passphrase-file, or run on a terminal")
        }
        return secret
    }

    func open(_ access: Vault.Access) throws -> Vault {
        // Fail fast on a missing vault before asking for a passphrase.
        if !isVault(path) { _ = try Vault.open(at: path, passphrase: SecureBytes(count: 0), access: access) }
        return try Vault.open(at: path, passphrase: try passphrase(), access: access)
    }

    private func isVault(_ path: String) -> Bool { access(path + "/header", F_OK) == 0 }
}

func environment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

/// An authenticator over an open vault, with the biometric user and the given configuration.
struct Session {
    let vault: Vault
    let store: VaultCredentialStore
    let client: WebAuthnClient

    init(vault: Vault, options: VaultOptions, interaction: InteractionOptions,
         configuration: Authenticator.Configuration = .init()) throws {
        self.vault = vault
        let gate = try BiometricGate(vault: vault, pinFile: options.pinFile, action: interaction.action)
        store = VaultCredentialStore(vault: vault, gate: gate)
        let user = BiometricUser(gate: gate, action: interaction.action, instantTimeout: interaction.instantTimeout)
        client = WebAuthnClient(authenticator: Authenticator(configuration: configuration, store: store, user: user))
    }
}
