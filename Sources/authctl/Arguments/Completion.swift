/// Shell completion scripts made from the declarations: commands and subcommands, each command's
/// options and the global ones, the values of choice options (also after `--name=`), files and
/// directories where an option takes one, command names for `help`.
///
/// Both scripts first find the command path the way the parser does — words that are not options,
/// nor an option's value, and that extend a known path — then complete for that command.
enum Completion {
    static func bash(root: CommandSpec, globals: [OptionSpec]) -> String {
        let model = Model(root: root, globals: globals)
        var lines = [
            "# bash completion for authctl, made by 'authctl completion bash'.",
            "# Load it with: source <(authctl completion bash)",
            "_authctl() {",
            "    local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\" path=\"\" word i ended=\"\"",
            "    for ((i = 1; i < COMP_CWORD; i++)); do",
            "        word=\"${COMP_WORDS[i]}\"",
            "        [[ $word == -- ]] && { ended=1; continue; }",
            "        [[ -n $ended || $word == -* || $word == = || ${COMP_WORDS[i-1]} == = ]] && continue",
            "        case \"${COMP_WORDS[i-1]}\" in \(model.valueOptions.joined(separator: "|"))) continue ;; esac",
            "        case \"${path:+$path }$word\" in",
            "            \(model.paths.map(quoted).joined(separator: "|"))) path=\"${path:+$path }$word\" ;;",
            "        esac",
            "    done",
            "    # The option whose value is being typed: `--kdf m`, or `--kdf=m` (bash splits words at =).",
            "    local option=\"$prev\"",
            "    if [[ $cur == = ]]; then cur=\"\"; elif [[ $prev == = ]]; then option=\"${COMP_WORDS[COMP_CWORD-2]}\"; fi",
            "    case \"$option\" in",
        ]
        for option in model.allOptions where option.takesValue {
            let reply = switch (option.choices ?? option.suggestions, option.completion) {
            case (let choices?, _): "compgen -W \(quoted(choices.joined(separator: " "))) -- \"$cur\""
            case (nil, .files): "compgen -f -- \"$cur\""
            case (nil, .directories): "compgen -d -- \"$cur\""
            case (nil, .none): "true"
            }
            lines.append("        \(option.name)) COMPREPLY=($(\(reply))); return ;;")
        }
        lines += [
            "    esac",
            "    [[ -n $ended ]] && { COMPREPLY=($(compgen -f -- \"$cur\")); return; }",
            "    local words",
            "    case \"$path\" in",
        ]
        for (path, command) in root.walk() {
            let words = model.words(for: command)
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
        let model = Model(root: root, globals: globals)
        var lines = [
            "#compdef authctl",
            "# zsh completion for authctl, made by 'authctl completion zsh'.",
            "# Load it with: source <(authctl completion zsh)   (or save it as _authctl in your $fpath)",
            "_authctl() {",
            "    # Find the command path, and hand _arguments the other words only, so that each",
            "    # command's own arguments are numbered from 1.",
            "    local path_words=\"\" word candidate i current=1 ended=\"\"",
            "    local -a kept",
            "    kept=(\"${words[1]}\")",
            "    for ((i = 2; i <= $#words; i++)); do",
            "        word=${words[i]}",
            "        [[ $word == -- ]] && ended=1",
            "        if (( i < CURRENT )) && [[ -z $ended && $word != -* ]] && [[ ${words[i-1]} != (\(model.valueOptions.joined(separator: "|"))) ]]; then",
            "            candidate=\"${path_words:+$path_words }$word\"",
            "            case $candidate in",
            "                (\(model.paths.map(quoted).joined(separator: "|")))) path_words=$candidate; continue ;;",
            "            esac",
            "        fi",
            "        kept+=(\"$word\")",
            "        (( i == CURRENT )) && current=$#kept",
            "    done",
            "    words=(\"${kept[@]}\")",
            "    CURRENT=$current",
            "    case $path_words in",
        ]
        for (path, command) in root.walk() {
            var specs = (command.options + globals).map(zshSpec)
            if !command.subcommands.isEmpty {
                let names = command.subcommands.map { "\($0.name)\\:\(zshEscape($0.abstract, spaces: true))" }.joined(separator: " ")
                specs.append("'1:command:((\(names)))'")
            } else if let argument = command.arguments.first {
                let values = argument.completesCommands ? root.subcommands.map(\.name) : argument.choices
                let action = values.map { "(\($0.joined(separator: " ")))" } ?? " "
                specs.append("'\(argument.variadic ? "*" : "1"):\(argument.name.lowercased()):\(action)'")
            }
            lines.append("        (\(quoted(path.joined(separator: " ")))) _arguments -s -S \(specs.joined(separator: " ")) ;;")
        }
        // Autoloaded from $fpath, this file is the body of _authctl's first call: it must complete
        // then too, not only define the function (compdef alone would leave the first Tab empty).
        lines += ["    esac", "}",
                  "if [[ ${zsh_eval_context[-1]} == loadautofunc ]]; then",
                  "    _authctl \"$@\"",
                  "else",
                  "    compdef _authctl authctl",
                  "fi"]
        return lines.joined(separator: "\n")
    }

    /// What both scripts need to know of the declarations.
    private struct Model {
        let root: CommandSpec
        let globals: [OptionSpec]

        /// Every command path, `vault info` style.
        var paths: [String] { root.walk().dropFirst().map { $0.path.joined(separator: " ") } }

        /// Every option once (an option declared by several commands is one case).
        var allOptions: [OptionSpec] {
            var seen = Set<String>()
            return (globals + root.walk().flatMap(\.command.options)).filter { seen.insert($0.name).inserted }
                .sorted { $0.name < $1.name }
        }

        var valueOptions: [String] { allOptions.filter(\.takesValue).map(\.name) }

        /// What may follow `command`: subcommands, options, and the values its argument takes.
        func words(for command: CommandSpec) -> [String] {
            let argument = command.arguments.first
            let values = argument?.completesCommands == true ? root.subcommands.map(\.name) : (argument?.choices ?? [])
            return command.subcommands.map(\.name) + (command.options + globals).map(\.name) + ["--help"] + values
        }
    }

    /// One `_arguments` spec: `'--kdf[Argon2id cost]:LEVEL:(min interactive)'`; `=` accepted too.
    private static func zshSpec(_ option: OptionSpec) -> String {
        var spec = (option.repeatable ? "*" : "") + option.name + (option.takesValue ? "=" : "") + "[\(zshEscape(option.help))]"
        if let placeholder = option.placeholder {
            let action = switch (option.choices ?? option.suggestions, option.completion) {
            case (let choices?, _): "(\(choices.joined(separator: " ")))"
            case (nil, .files): "_files"
            case (nil, .directories): "_files -/"
            case (nil, .none): " "
            }
            spec += ":\(placeholder):\(action)"
        }
        return "'" + spec + "'"
    }

    /// `text` inside a single-quoted `_arguments` spec: the spec's own punctuation backslashed (and
    /// spaces, inside a `((value\:description …))` list), an apostrophe made typographic.
    private static func zshEscape(_ text: String, spaces: Bool = false) -> String {
        var out = ""
        for c in text {
            switch c {
            case " " where spaces: out += "\\ "
            case "'": out += "’"  // _arguments evaluates parts of a spec: no quote may reach it
            case "[", "]", ":", "\\", "(", ")": out += "\\" + String(c)
            default: out.append(c)
            }
        }
        return out
    }

    /// A word for a `case` pattern: double-quoted, so spaces and the empty path match literally.
    private static func quoted(_ text: String) -> String { "\"" + text + "\"" }
}
