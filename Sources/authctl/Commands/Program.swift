import Session

/// The top level: only the list of commands, each declared in its own file.
enum Program {
    static let root = CommandSpec(
        name: "authctl",
        abstract: "a software platform authenticator (passkeys) for RP developers",
        discussion: """
            authctl keeps passkeys in an encrypted vault, gates them behind a simulated biometric \
            PIN, and answers WebAuthn options JSON with the response JSON a browser would POST. \
            Responses go to stdout as one line of JSON; messages and errors to stderr. Options take \
            --name value or --name=value; the global options go before or after the command; -- \
            ends the options. Each command's options: authctl COMMAND --help, or man authctl-COMMAND.
            """,
        subcommands: [
            InitCommand.spec, RegisterCommand.spec, SignCommand.spec, ListCommand.spec, DeleteCommand.spec, CredentialCommand.spec, SignalCommand.spec, CapabilitiesCommand.spec,
            DeviceCommand.spec, SyncCommand.spec, ScenarioCommand.spec, AuditCommand.spec, BiometryCommand.spec, FaultsCommand.spec, ProfilesCommand.spec, CACommand.spec, VaultCommand.spec, BenchCommand.spec,
            ServeCommand.spec, WebDriverCommand.spec, CTAPCommand.spec, HelpCommand.spec, CompletionCommand.spec, ManpagesCommand.spec, VersionCommand.spec,
        ],
        examples: ["export AUTHCTL_VAULT=~/authctl-vault AUTHCTL_PASSPHRASE='a long passphrase' AUTHCTL_PIN=1234",
                   "authctl init",
                   "curl -s https://rp.test/register/begin | authctl register --origin https://rp.test --options - > reg.json",
                   "curl -s https://rp.test/login/begin | authctl sign --origin https://rp.test --options - > login.json",
                   "authctl list"])

    static var parser: ArgumentParser { ArgumentParser(root: root, globals: GlobalOptions.all) }

    /// Parses `words` and runs what they ask for; returns the exit status.
    static func main(_ words: [String]) -> Int32 {
        let json = GlobalOptions.wantsJSON(words)
        do throws(CLIError) {
            switch try parser.parse(words) {
            case .help(let path): try Output.data(Help.text(for: path, root: root, globals: GlobalOptions.all))
            case .version: try Output.data(VersionCommand.line)
            case .run(let command, let arguments):
                // Before any command hashes, signs or draws a random number (its options may).
                do { try CryptoAvailability.check() } catch {
                    throw CLIError(.unknown, "OpenSSL cannot be used (is OPENSSL_CONF pointing at a configuration without its default provider?): \(error)")
                }
                try command.run?(arguments)
            }
            return 0
        } catch {
            return ErrorReport.emit(error, json: json)
        }
    }
}
