/// One option a command declares, once: its name, whether it takes a value, what the value may
/// be, and its help. Parsing, `--help`, and shell completion all read this declaration.
struct OptionSpec: Sendable, Hashable {
    enum Completion: Sendable, Hashable { case none, files, directories }

    let name: String
    /// The value's placeholder (`URL`, `FILE`); `nil` for a flag.
    let placeholder: String?
    let help: String
    /// The values the option accepts, when it is a choice; checked at parse time.
    var choices: [String]? = nil
    /// Values shell completion offers for an option that checks its value itself (`--mediation`,
    /// whose unknown values are the browser's TypeError rather than a usage error).
    var suggestions: [String]? = nil
    var repeatable = false
    var required = false
    var completion: Completion = .none
    /// Whether `--name ""` is a value (a user name may be empty; a path may not).
    var allowsEmpty = false

    var takesValue: Bool { placeholder != nil }

    static func flag(_ name: String, _ help: String) -> OptionSpec {
        OptionSpec(name: name, placeholder: nil, help: help)
    }

    static func value(_ name: String, _ placeholder: String, _ help: String, choices: [String]? = nil,
                      suggestions: [String]? = nil, repeatable: Bool = false, required: Bool = false,
                      completion: Completion = .none, allowsEmpty: Bool = false) -> OptionSpec {
        var spec = OptionSpec(name: name, placeholder: placeholder, help: help, choices: choices, repeatable: repeatable,
                              required: required, completion: completion, allowsEmpty: allowsEmpty)
        spec.suggestions = suggestions
        return spec
    }

    /// How the option reads in a usage line: `--origin URL`, `--kdf min|interactive`, `--json`.
    /// A long list of choices stays a placeholder (the help names where to find them).
    var synopsis: String {
        guard let placeholder else { return name }
        guard let choices, choices.count <= 4 else { return name + " " + placeholder }
        return name + " " + choices.joined(separator: "|")
    }
}
