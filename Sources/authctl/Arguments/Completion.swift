/// Shell completion scripts made from the declarations: commands and subcommands, each command's
/// options and the global ones, the values of choice options, files and directories where an
/// option takes one.
enum Completion {
    static func bash(root: CommandSpec, globals: [OptionSpec]) -> String {
        let commands = root.walk().dropFirst()
        let valueOptions = Set((globals + commands.flatMap(\.command.options)).filter(\.takesValue).map(\.name)).sorted()
        var lines = [
            "# bash completion for authctl, made by 'authctl completion bash'.",
            "# Load it with: source <(authctl completion bash)",
            "_authctl() {",
            "    local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\" path=\"\" word i",
            "    for ((i = 1; i < COMP_CWORD; i++)); do",
            "        word=\"${COMP_WORDS[i]}\"",
            "        [[ $word == -- ]] && break",
            "        [[ $word == -* ]] && continue",
            "        case \"${COMP_WORDS[i-1]}\" in \(valueOptions.joined(separator: "|"))) continue ;; esac",
            "        case \"${path:+$path }$word\" in",
        ]
        lines += commands.map { "            \(quoted($0.path.joined(separator: " ")))) path=\"${path:+$path }$word\" ;;" }
        lines += ["        esac", "    done", "    case \"$prev\" in"]
        for option in Set(globals + commands.flatMap(\.command.options)).sorted(by: { $0.name < $1.name }) where option.takesValue {
            let reply = switch (option.choices, option.completion) {
            case (let choices?, _): "compgen -W \(quoted(choices.joined(separator: " "))) -- \"$cur\""
            case (nil, .files): "compgen -f -- \"$cur\""
            case (nil, .directories): "compgen -d -- \"$cur\""
            case (nil, .none): "true"
            }
            lines.append("        \(option.name)) COMPREPLY=($(\(reply))); return ;;")
        }
        lines += ["    esac", "    local words"]
        lines.append("    case \"$path\" in")
        for (path, command) in root.walk() {
            let words = command.subcommands.map(\.name) + (command.options + globals).map(\.name) + ["--help"]
                + (command.arguments.first?.choices ?? [])
            lines.append("        \(quoted(path.joined(separator: " ")))) words=\(quoted(words.joined(separator: " "))) ;;")
        }
        lines += [
            "    esac",
            "    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))",
            "}",
            "complete -o default -F _authctl authctl",
        ]
        return lines.joined(separator: "\n")
    }

    static func zsh(root: CommandSpec, globals: [OptionSpec]) -> String {
        let commands = root.walk().dropFirst()
        let valueOptions = Set((globals + commands.flatMap(\.command.options)).filter(\.takesValue).map(\.name)).sorted()
        var lines = [
            "#compdef authctl",
            "# zsh completion for authctl, made by 'authctl completion zsh'.",
            "# Load it with: source <(authctl completion zsh)   (or save it as _authctl in your $fpath)",
            "_authctl() {",
            "    local path_words=\"\" word i",
            "    for ((i = 2; i < CURRENT; i++)); do",
            "        word=${words[i]}",
            "        [[ $word == -- ]] && break",
            "        [[ $word == -* ]] && continue",
            "        case ${words[i-1]} in (\(valueOptions.joined(separator: "|"))) continue ;; esac",
            "        case \"${path_words:+$path_words }$word\" in",
        ]
        lines += commands.map { "            (\(quoted($0.path.joined(separator: " "))))) path_words=\"${path_words:+$path_words }$word\" ;;" }
        lines += ["        esac", "    done", "    case $path_words in"]
        for (path, command) in root.walk() {
            var specs = (command.options + globals).map(zshSpec)
            if !command.subcommands.isEmpty {
                let names = command.subcommands.map { "\($0.name)\\:\(zshEscape($0.abstract, spaces: true))" }.joined(separator: " ")
                specs.append("'1:command:((\(names)))'")
            } else if let argument = command.arguments.first {
                let action = argument.choices.map { "(\($0.joined(separator: " ")))" } ?? ""
                specs.append("'\(argument.variadic ? "*" : "1"):\(argument.name.lowercased()):\(action)'")
            }
            lines.append("        (\(quoted(path.joined(separator: " ")))) _arguments -s \(specs.joined(separator: " ")) ;;")
        }
        lines += ["    esac", "}", "compdef _authctl authctl 2>/dev/null || _authctl \"$@\""]
        return lines.joined(separator: "\n")
    }

    /// One `_arguments` spec: `'--kdf[Argon2id cost]:LEVEL:(min interactive)'`.
    private static func zshSpec(_ option: OptionSpec) -> String {
        var spec = (option.repeatable ? "*" : "") + option.name + "[\(zshEscape(option.help))]"
        if let placeholder = option.placeholder {
            let action = switch (option.choices, option.completion) {
            case (let choices?, _): "(\(choices.joined(separator: " ")))"
            case (nil, .files): "_files"
            case (nil, .directories): "_files -/"
            case (nil, .none): " "
            }
            spec += ":\(placeholder):\(action)"
        }
        return "'" + spec + "'"
    }

    /// `text` inside a single-quoted `_arguments` spec: quotes closed and reopened, the spec's own
    /// punctuation backslashed (and spaces, inside a `((value\\:description …))` list).
    private static func zshEscape(_ text: String, spaces: Bool = false) -> String {
        var out = ""
        for c in text {
            switch c {
            case " " where spaces: out += "\\ "
            case "'": out += "'\\''"
            case "[", "]", ":", "\\", "(", ")": out += "\\" + String(c)
            default: out.append(c)
            }
        }
        return out
    }

    /// A word for a `case` pattern: double-quoted, so spaces and the empty path match literally.
    private static func quoted(_ text: String) -> String { "\"" + text + "\"" }
}
