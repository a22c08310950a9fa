/// A command as it declares itself: its name and help, its options and arguments once, and either
/// subcommands or the function that runs it. The command tree is ``Program/root``.
struct CommandSpec: Sendable {
    typealias Run = @Sendable (ParsedArguments) throws(CLIError) -> Void

    let name: String
    let abstract: String
    var discussion: String? = nil
    var options: [OptionSpec] = []
    var arguments: [ArgumentSpec] = []
    var subcommands: [CommandSpec] = []
    var examples: [String] = []
    var run: Run? = nil

    func subcommand(named name: String) -> CommandSpec? {
        subcommands.first { $0.name == name }
    }

    /// This command and every command below it, with their paths (`["vault", "info"]`).
    func walk(_ path: [String] = []) -> [(path: [String], command: CommandSpec)] {
        [(path, self)] + subcommands.flatMap { $0.walk(path + [$0.name]) }
    }
}
