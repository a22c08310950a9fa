/// A positional argument a command declares.
struct ArgumentSpec: Sendable, Hashable {
    let name: String
    let help: String
    var optional = false
    /// Takes every remaining positional argument.
    var variadic = false
    var choices: [String]? = nil
    /// Shell completion offers the names of commands (for `help`).
    var completesCommands = false
}
