/// `authctl version` (also `authctl --version`).
enum VersionCommand {
    static let spec = CommandSpec(name: "version", abstract: "print the version", run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        try Output.data("authctl \(Program.version)")
    }
}
