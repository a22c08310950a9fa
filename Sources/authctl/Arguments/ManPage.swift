/// Man pages made from the declarations that `--help` and the completion scripts read, so the
/// three cannot disagree: `authctl.1` (the commands, global options, environment, exit status,
/// files) and `authctl-PATH.1` for every command of the tree (`authctl-vault-info.1`), in roff for
/// the man macros. The `.TH` line carries the version and its date, never the time of the build.
struct ManPage: Sendable {
    /// `authctl`, `authctl-vault-info`.
    let name: String
    let text: String

    var fileName: String { name + ".1" }

    /// The page of a command path: `["vault", "info"]` is `authctl-vault-info`.
    static func name(for path: [String]) -> String { (["authctl"] + path).joined(separator: "-") }

    /// The pages of `path` and of every command below it (every page, for the empty path).
    static func pages(under path: [String], root: CommandSpec, globals: [OptionSpec]) -> [ManPage] {
        guard let command = root.command(at: path) else { return [] }
        return command.walk(path).map { page(for: $0.path, root: root, globals: globals) }
    }

    static func page(for path: [String], root: CommandSpec, globals: [OptionSpec]) -> ManPage {
        let command = root.command(at: path) ?? root
        var page = Writer(name: name(for: path))
        page.header(abstract: command.abstract)
        page.section("SYNOPSIS", [synopsis(path, command)])
        var description = [sentence(command.abstract)]
        if let discussion = command.discussion { description += paragraphs(discussion) }
        page.section("DESCRIPTION", description.map(Roff.text))
        if !command.subcommands.isEmpty {
            page.section("COMMANDS")
            for (below, leaf) in command.walk(path).dropFirst() where leaf.run != nil {
                page.item(Roff.bold(below.dropFirst(path.count).joined(separator: " ")),
                          Roff.text(leaf.abstract) + " (" + Roff.reference(name(for: below)) + ")")
            }
        }
        if !command.options.isEmpty {
            page.section(path.isEmpty ? "COMMAND OPTIONS" : "OPTIONS")
            for option in command.options { page.option(option) }
        }
        if !command.arguments.isEmpty {
            page.section("ARGUMENTS")
            for argument in command.arguments { page.item(Roff.italic(argument.name), Roff.text(argument.help)) }
        }
        page.section(path.isEmpty ? "OPTIONS" : "GLOBAL OPTIONS",
                     [Roff.text(path.isEmpty ? "These go before or after the command:" : "Every command takes these, before or after its name:")])
        for option in globals { page.option(option) }
        page.item(Roff.bold("-h") + ", " + Roff.bold("--help"), Roff.text("show this help"))
        page.item(Roff.bold("--version"), Roff.text("print the version"))
        if path.isEmpty {
            environment(&page)
            exitStatus(&page)
            files(&page)
        } else {
            page.section("EXIT STATUS", [
                Roff.text("0 on success; otherwise the exit code of the error's name, which stderr names (")
                    + Roff.reference("authctl") + Roff.text(" lists them).")
            ])
        }
        if !command.examples.isEmpty { page.examples(command.examples) }
        page.section("SEE ALSO", [seeAlso(path, command, root: root).map { Roff.reference($0) }.joined(separator: ", ")])
        return ManPage(name: page.name, text: page.text)
    }

    /// The usage line `--help` prints, set in the fonts of a synopsis: the command's words and
    /// option names bold, placeholders and values italic.
    private static func synopsis(_ path: [String], _ command: CommandSpec) -> String {
        let words = Help.usage((["authctl"] + path).joined(separator: " "), command).split(separator: " ").map(String.init)
        return words.enumerated().map { index, word in
            if index <= path.count { return Roff.bold(word) }
            var core = word[...]
            let open = core.hasPrefix("[") ? "[" : ""
            if !open.isEmpty { core = core.dropFirst() }
            let close = core.hasSuffix("]") ? "]" : ""
            if !close.isEmpty { core = core.dropLast() }
            let dots = core.hasSuffix("...") ? "..." : ""
            if !dots.isEmpty { core = core.dropLast(3) }
            let body = core.hasPrefix("-")
                ? Roff.bold(String(core))
                : core.split(separator: "|").map { Roff.italic(String($0)) }.joined(separator: "|")
            return open + body + Roff.text(dots) + close
        }.joined(separator: " ")
    }

    /// The program's page names the top-level commands' pages; a command's names the program's, its group's and
    /// its subcommands' pages.
    private static func seeAlso(_ path: [String], _ command: CommandSpec, root: CommandSpec) -> [String] {
        if path.isEmpty { return root.subcommands.map { name(for: [$0.name]) } }
        var pages = [name(for: [])]
        if path.count > 1 { pages.append(name(for: Array(path.dropLast()))) }
        return pages + command.subcommands.map { name(for: path + [$0.name]) }
    }

    private static func environment(_ page: inout Writer) {
        page.section("ENVIRONMENT")
        for variable in EnvironmentVariable.all { page.item(Roff.bold(variable.name), Roff.text(variable.help)) }
        page.paragraph(Roff.text("A scenario file's ${NAME} is the value of the variable NAME (")
                       + Roff.reference(name(for: ["scenario", "run"])) + ").")
    }

    /// The error table itself: each name with its code and what it means.
    private static func exitStatus(_ page: inout Writer) {
        page.section("EXIT STATUS", [
            Roff.text("On failure authctl prints nothing on stdout and one line on stderr, "
                      + "\"authctl: error: NAME: message\" (with --json, one JSON object), and exits with the name's code:")
        ])
        page.item(Roff.bold("0"), Roff.text("success"))
        for name in CLIError.Name.allCases.sorted(by: { $0.exitCode < $1.exitCode }) {
            page.item(Roff.bold(String(name.exitCode)), Roff.bold(name.rawValue) + Roff.text(": " + name.summary))
        }
    }

    private static func files(_ page: inout Writer) {
        page.section("FILES")
        page.item(Roff.italic("~/.local/share/authctl/"),
                  Roff.text("the default vault: a directory of the user's own, mode 700 ($XDG_DATA_HOME/authctl when that is set, $AUTHCTL_VAULT or --vault instead)"))
        page.item(Roff.italic("/usr/share/publicsuffix/public_suffix_list.dafsa"),
                  Roff.text("the Public Suffix List (Debian's publicsuffix package) that decides which RP IDs are registrable; libpsl's built-in copy when it is absent"))
    }

    /// `sign in with a passkey` as a sentence: `Sign in with a passkey.`
    private static func sentence(_ text: String) -> String {
        guard let first = text.first else { return text }
        let body = first.uppercased() + text.dropFirst()
        return body.hasSuffix(".") ? body : body + "."
    }

    /// A discussion's paragraphs (blank lines between them), each on one line.
    private static func paragraphs(_ text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false)
            .split(whereSeparator: { $0.allSatisfy(\.isWhitespace) })
            .map { $0.map(trimmed).joined(separator: " ") }
    }

    private static func trimmed(_ line: Substring) -> Substring {
        var line = line
        while line.first?.isWhitespace == true { line = line.dropFirst() }
        while line.last?.isWhitespace == true { line = line.dropLast() }
        return line
    }

    /// One page as it is written, request by request.
    private struct Writer {
        let name: String
        private var lines: [String] = []

        init(name: String) { self.name = name }

        var text: String { lines.joined(separator: "\n") + "\n" }

        mutating func header(abstract: String) {
            lines += [
                ".\\\" Made by 'authctl manpages' from the command declarations; edit those, not this page.",
                ".TH " + [name.uppercased(), "1", VersionCommand.date, "authctl " + VersionCommand.version, "authctl manual"]
                    .map(Roff.argument).joined(separator: " "),
                ".nh",  // no hyphenation: an option name or value broken at a line's end could not be copied
                ".ad l",
                ".SH NAME",
                Roff.text(name) + " \\- " + Roff.text(abstract),
            ]
        }

        /// A section, with paragraphs of roff text (already escaped).
        mutating func section(_ title: String, _ paragraphs: [String] = []) {
            lines.append(".SH " + title)
            for (index, paragraph) in paragraphs.enumerated() {
                if index > 0 { lines.append(".PP") }
                lines.append(paragraph)
            }
        }

        mutating func paragraph(_ roff: String) { lines += [".PP", roff] }

        /// A tagged paragraph: `tag` on its line, `body` indented below.
        mutating func item(_ tag: String, _ body: String) { lines += [".TP", tag, body] }

        /// An option as `--help` shows it (`--kdf min|interactive`, `--origin URL`), its help, and
        /// the choices that the usage line leaves out when there are many.
        mutating func option(_ option: OptionSpec) {
            var tag = Roff.bold(option.name)
            var body = Roff.text(option.help + (option.required ? " (required)" : ""))
            if let placeholder = option.placeholder {
                let shown = option.synopsis.dropFirst(option.name.count + 1)
                if shown == placeholder[...] {
                    tag += " " + Roff.italic(placeholder)
                    if let choices = option.choices { body += "\n.IP\n" + Roff.text("One of: " + choices.joined(separator: ", ") + ".") }
                } else {
                    tag += " " + shown.split(separator: "|").map { Roff.italic(String($0)) }.joined(separator: "|")
                }
            }
            item(tag, body)
        }

        mutating func examples(_ examples: [String]) {
            lines += [".SH EXAMPLES", ".RS 4", ".nf"] + examples.map(Roff.text) + [".fi", ".RE"]
        }
    }
}

extension CommandSpec {
    /// The command at `path` below this one, or `nil` when a name is unknown.
    func command(at path: [String]) -> CommandSpec? {
        var command = self
        for name in path {
            guard let next = command.subcommand(named: name) else { return nil }
            command = next
        }
        return command
    }
}
