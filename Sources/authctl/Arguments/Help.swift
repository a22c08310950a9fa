/// `--help` text, made from the declarations: a usage line, the abstract and discussion, the
/// command's options with their help, the global options, and examples.
enum Help {
    static func text(for path: [String], root: CommandSpec, globals: [OptionSpec]) -> String {
        var command = root
        for name in path { command = command.subcommand(named: name) ?? command }
        let name = (["authctl"] + path).joined(separator: " ")
        var out = [String]()
        if path.isEmpty { out += ["authctl \(VersionCommand.version) — \(root.abstract)", ""] }
        out.append("usage: " + usage(name, command))
        if !path.isEmpty { out += ["", command.abstract] }
        if let discussion = command.discussion { out += ["", discussion] }
        if !command.subcommands.isEmpty {
            let rows = command.walk().dropFirst().filter { $0.command.run != nil }.map { ($0.path.joined(separator: " "), $0.command.abstract) }
            out += ["", "commands:"] + table(rows)
        }
        if !command.arguments.isEmpty {
            out += ["", "arguments:"] + table(command.arguments.map { ($0.name, $0.help) })
        }
        if !command.options.isEmpty {
            out += ["", "options:"] + table(command.options.map { ($0.synopsis, $0.help + ($0.required ? " (required)" : "")) })
        }
        out += ["", "global options (before or after the command):"]
            + table(globals.map { ($0.synopsis, $0.help) } + [("-h, --help", "show this help"), ("--version", "print the version")])
        if !command.examples.isEmpty { out += ["", "examples:"] + command.examples.map { "  " + $0 } }
        if !command.subcommands.isEmpty {
            out += ["", "Run '\(name) COMMAND --help' (or 'authctl help \(path.isEmpty ? "" : path.joined(separator: " ") + " ")COMMAND') for a command's options."]
        }
        return out.joined(separator: "\n")
    }

    static func usage(_ name: String, _ command: CommandSpec) -> String {
        if !command.subcommands.isEmpty { return "\(name) COMMAND [OPTIONS]" }
        var parts = [name] + command.options.filter(\.required).map(\.synopsis)
        if command.options.contains(where: { !$0.required }) { parts.append("[OPTIONS]") }
        parts += command.arguments.map { argument in
            let text = argument.name + (argument.variadic ? "..." : "")
            return argument.optional ? "[\(text)]" : text
        }
        return parts.joined(separator: " ")
    }

    private static func table(_ rows: [(String, String)]) -> [String] {
        let width = min(rows.map(\.0.count).max() ?? 0, 34)
        return rows.map { left, right in
            left.count > width
                ? "  \(left)\n  \(String(repeating: " ", count: width))  \(right)"
                : "  \(left)\(String(repeating: " ", count: width - left.count))  \(right)"
        }
    }
}
