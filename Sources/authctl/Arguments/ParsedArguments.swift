import Session

/// What the parser read for one command: option values and flags, looked up by their declaration
/// (so a typo in a name is a compile error, not a silent `nil`), and positional arguments.
struct ParsedArguments: Sendable {
    let path: [String]
    let values: [String: [String]]
    let flags: Set<String>
    let positionals: [String]

    func value(_ option: OptionSpec) -> String? { values[option.name]?.last }
    func values(_ option: OptionSpec) -> [String] { values[option.name] ?? [] }
    func flag(_ option: OptionSpec) -> Bool { flags.contains(option.name) }
    func argument(_ index: Int) -> String? { index < positionals.count ? positionals[index] : nil }

    /// The command's name as a user types it: `authctl vault info`.
    var commandName: String { (["authctl"] + path).joined(separator: " ") }

    /// A value parsed as a whole number in `range`, or a usage error naming the option.
    func integer(_ option: OptionSpec, in range: ClosedRange<Int>) throws(CLIError) -> Int? {
        guard let text = value(option) else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw CLIError(.usage, "\(option.name) takes a whole number from \(range.lowerBound) to \(range.upperBound), not '\(EchoedInput.text(text))'")
        }
        return number
    }
}
