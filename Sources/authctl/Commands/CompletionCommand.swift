/// `authctl completion bash|zsh`: a completion script, made from the command declarations.
enum CompletionCommand {
    static let spec = CommandSpec(
        name: "completion", abstract: "print a shell completion script (bash or zsh)",
        arguments: [ArgumentSpec(name: "SHELL", help: "bash or zsh", choices: ["bash", "zsh"])],
        examples: ["source <(authctl completion bash)", "authctl completion zsh > \"${fpath[1]}/_authctl\""],
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        switch args.argument(0) {
        case "zsh": try Output.data(Completion.zsh(root: Program.root, globals: GlobalOptions.all))
        default: try Output.data(Completion.bash(root: Program.root, globals: GlobalOptions.all))
        }
    }
}
