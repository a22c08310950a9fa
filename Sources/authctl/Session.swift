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

/// The vault's settings record: the biometric PIN verifier.
enum VaultSettings {
    static let pinVerifier: UInt8 = 1

    static func record(in vault: Vault) -> VaultRecord? { vault.records(kind: .settings).first }

    static func pinVerifier(in vault: Vault) -> [UInt8]? { record(in: vault)?.field(pinVerifier).map(Array.init) }
}

/// An authenticator over an open vault, with the biometric user and the given configuration.
struct Session {
    let vault: Vault
    let store: VaultCredentialStore
    let client: WebAuthnClient

    init(vault: Vault, pinFile: String?, configuration: Authenticator.Configuration = .init()) {
        self.vault = vault
        store = VaultCredentialStore(vault: vault)
        let user = BiometricUser(verifier: VaultSettings.pinVerifier(in: vault), pinFile: pinFile)
        client = WebAuthnClient(authenticator: Authenticator(configuration: configuration, store: store, user: user))
    }
}
