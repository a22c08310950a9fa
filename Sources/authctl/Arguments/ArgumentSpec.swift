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
    /// A base64url credential id: a word that starts with `--` is taken as one when it names no
    /// option, is near none, and decodes to at least 16 bytes (the shortest id authctl makes), so an
    /// id copied from `list` works without `--` before it.
    var credentialId = false
}
