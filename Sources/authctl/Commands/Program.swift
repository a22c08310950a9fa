import VirtualAuthenticator

/// The top level: only the list of commands, each declared in its own file.
enum Program {
    static let root = CommandSpec(
        name: "authctl",
        abstract: "a software platform authenticator (passkeys) for RP developers",
        subcommands: [
            InitCommand.spec, RegisterCommand.spec, SignCommand.spec, ListCommand.spec, DeleteCommand.spec, CredentialCommand.spec, SignalCommand.spec, CapabilitiesCommand.spec,
            DeviceCommand.spec, SyncCommand.spec, ScenarioCommand.spec, BiometryCommand.spec, FaultsCommand.spec, ProfilesCommand.spec, CACommand.spec, VaultCommand.spec, BenchCommand.spec,
            HelpCommand.spec, CompletionCommand.spec, VersionCommand.spec,
        ])

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
