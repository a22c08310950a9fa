/// `authctl version` (also `authctl --version`).
enum VersionCommand {
    static let spec = CommandSpec(name: "version", abstract: "print the version", run: { _ throws(CLIError) in
        Output.data("authctl \(Program.version)")
    })
}
