import Session

/// Reads a command line against the declared command tree, the way getopt_long does:
///
/// - the first words that name commands choose the command (`vault info`);
/// - `--name value` and `--name=value`; an option that takes a value takes the next word whatever
///   it looks like, so `--credential -AbC` works; flags take no value;
/// - global options (``GlobalOptions``) are accepted before and after the command;
/// - `--` ends options: every later word is a positional argument (a credential id may start
///   with `-`); a word with a single leading dash is an argument where the command takes one, and
///   a word with two is a credential id where the command takes one and the word is plainly an id
///   (``ArgumentSpec/credentialId``);
/// - `-h`/`--help` anywhere asks for the chosen command's help, `--version` for the version.
///
/// Anything unknown is a usage error that names the nearest known spelling.
struct ArgumentParser {
    enum Outcome {
        case run(CommandSpec, ParsedArguments)
        case help([String])
        case version
    }

    let root: CommandSpec
    let globals: [OptionSpec]

    func parse(_ words: [String]) throws(CLIError) -> Outcome {
        var path = [String]()
        var command = root
        var values = [String: [String]]()
        var flags = Set<String>()
        var positionals = [String]()
        var wantsHelp = false, wantsVersion = false, endOfOptions = false
        var i = 0
        while i < words.count {
            let word = words[i]
            i += 1
            if !endOfOptions && word == "--" {
                endOfOptions = true
                continue
            }
            if !endOfOptions && word.hasPrefix("-") && word != "-" {
                if word == "-h" || word == "--help" { wantsHelp = true; continue }
                if word == "--version" { wantsVersion = true; continue }
                if word.hasPrefix("--help=") || word.hasPrefix("--version=") {
                    throw CLIError(.usage, "\(Self.split(word).0) is a flag and takes no value")
                }
                // A single dash starts no option here (there are no short ones but -h): a base64url
                // credential id may start with one, so it is an argument where the command takes one.
                if !word.hasPrefix("--") && !command.arguments.isEmpty
                    && !(globals + command.options).contains(where: { $0.name == "-" + word }) {
                    positionals.append(word)
                    continue
                }
                if takesCredentialId(command, after: positionals.count), Self.isCredentialIdNotOption(word, options: globals + command.options) {
                    positionals.append(word)
                    continue
                }
                let (name, inline) = Self.split(word)
                guard word.hasPrefix("--"), let option = (globals + command.options).first(where: { $0.name == name }) else {
                    throw unknownOption(name, command: command, path: path)
                }
                guard option.takesValue else {
                    if inline != nil { throw CLIError(.usage, "\(name) is a flag and takes no value") }
                    flags.insert(name)
                    continue
                }
                let value: String
                if let inline {
                    value = inline
                } else {
                    guard i < words.count else { throw CLIError(.usage, "\(name) needs a value (\(option.synopsis))") }
                    value = words[i]
                    i += 1
                }
                if value.isEmpty && !option.allowsEmpty {
                    throw CLIError(.usage, "\(name) needs a value that is not empty (\(option.synopsis))")
                }
                if let choices = option.choices, !choices.contains(value) {
                    throw CLIError(.usage, "\(name) must be one of \(choices.joined(separator: ", ")), not '\(EchoedInput.text(value))'"
                        + NearestName.hint(value, among: choices))
                }
                if values[name] != nil && !option.repeatable {
                    throw CLIError(.usage, "\(name) given more than once")
                }
                values[name, default: []].append(value)
                continue
            }
            if !command.subcommands.isEmpty && positionals.isEmpty {
                guard let next = command.subcommand(named: word) else {
                    let place = path.isEmpty ? "" : " of 'authctl \(path.joined(separator: " "))'"
                    throw CLIError(.usage, "unknown command '\(EchoedInput.text(word))'\(place)"
                        + NearestName.hint(word, among: command.subcommands.map(\.name)) + " (see 'authctl help')")
                }
                path.append(word)
                command = next
                continue
            }
            positionals.append(word)
        }

        if wantsHelp { return .help(path) }
        if wantsVersion { return .version }
        guard command.run != nil else {
            if path.isEmpty { return .help([]) }
            throw CLIError(.usage, "'authctl \(path.joined(separator: " "))' needs one of: "
                + command.subcommands.map(\.name).joined(separator: ", "))
        }
        let parsed = ParsedArguments(path: path, values: values, flags: flags, positionals: positionals)
        try check(parsed, against: command)
        return .run(command, parsed)
    }

    /// Required options present; positional arguments as many as declared, and of the declared choices.
    private func check(_ parsed: ParsedArguments, against command: CommandSpec) throws(CLIError) {
        for option in command.options where option.required && parsed.values[option.name] == nil {
            throw CLIError(.usage, "\(option.synopsis) is required: \(option.help) (see '\(parsed.commandName) --help')")
        }
        let declared = command.arguments
        let needed = declared.filter { !$0.optional }.count
        guard parsed.positionals.count >= needed else {
            throw CLIError(.usage, "\(parsed.commandName) needs \(declared[parsed.positionals.count].name)")
        }
        if declared.last?.variadic != true, parsed.positionals.count > declared.count {
            let extra = parsed.positionals[declared.count]
            throw CLIError(.usage, "unexpected argument '\(EchoedInput.text(extra))' for '\(parsed.commandName)'"
                + (extra.hasPrefix("-") ? "" : " (see '\(parsed.commandName) --help')"))
        }
        for (index, value) in parsed.positionals.enumerated() {
            let spec = declared[min(index, declared.count - 1)]
            if let choices = spec.choices, !choices.contains(value) {
                throw CLIError(.usage, "\(spec.name) must be one of \(choices.joined(separator: ", ")), not '\(EchoedInput.text(value))'")
            }
        }
    }

    /// Whether the command's next positional argument is a credential id.
    private func takesCredentialId(_ command: CommandSpec, after count: Int) -> Bool {
        guard let last = command.arguments.last else { return false }
        let spec = count < command.arguments.count ? command.arguments[count] : (last.variadic ? last : nil)
        return spec?.credentialId == true
    }

    /// A `--word` that is an id and not a mistyped option: no option has its name or a name near it,
    /// and it decodes as unpadded base64url to 16 bytes or more.
    private static func isCredentialIdNotOption(_ word: String, options: [OptionSpec]) -> Bool {
        let names = options.map(\.name) + ["--help", "--version"]
        guard word.hasPrefix("--"), !word.contains("="), !names.contains(word) else { return false }
        guard let raw = Base64URL.decodeStrict(word), raw.count >= 16 else { return false }
        return NearestName.to(word, among: names) == nil
    }

    private static func split(_ word: String) -> (String, String?) {
        guard let equals = word.firstIndex(of: "=") else { return (word, nil) }
        return (String(word[..<equals]), String(word[word.index(after: equals)...]))
    }

    /// Names the nearest option this command knows, or the command the option belongs to.
    private func unknownOption(_ name: String, command: CommandSpec, path: [String]) -> CLIError {
        let here = "authctl" + path.map { " " + $0 }.joined()
        if !name.hasPrefix("--") {
            return CLIError(.usage, "unknown option '\(EchoedInput.text(name))' for '\(here)'"
                + NearestName.hint("-" + name, among: (globals + command.options).map(\.name))
                + "; options are spelled --name, and an argument that starts with '-' goes after '--'")
        }
        let owners = command.walk(path).filter { $0.command.options.contains { $0.name == name } }
        if !owners.isEmpty {
            let names = owners.map { "'authctl \($0.path.joined(separator: " "))'" }.joined(separator: ", ")
            return CLIError(.usage, "\(name) belongs to \(names): give it after the command")
        }
        return CLIError(.usage, "unknown option '\(EchoedInput.text(name))' for '\(here)'"
            + NearestName.hint(name, among: (globals + command.options).map(\.name) + ["--help", "--version"]))
    }
}
