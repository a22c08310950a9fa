import Session

/// `authctl help [COMMAND...]`: the same text as `authctl COMMAND --help`.
enum HelpCommand {
    static let spec = CommandSpec(
        name: "help", abstract: "show help for authctl or one of its commands",
        arguments: [ArgumentSpec(name: "COMMAND", help: "the command (and subcommand) to explain", optional: true, variadic: true,
                                 completesCommands: true)],
        examples: ["authctl help sign", "authctl help vault passwd"],
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        var command = Program.root
        for name in args.positionals {
            guard let next = command.subcommand(named: name) else {
                throw CLIError(.usage, "no command '\(EchoedInput.text(args.positionals.joined(separator: " ")))'"
                    + NearestName.hint(name, among: command.subcommands.map { $0.name }) + " (see 'authctl help')")
            }
            command = next
        }
        try Output.data(Help.text(for: args.positionals, root: Program.root, globals: GlobalOptions.all))
    }
}
