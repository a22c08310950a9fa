import Glibc
import VirtualAuthenticator

/// Reads the options JSON of `--options FILE` or `--options -` (stdin), whole, up to ``limit``
/// (through ``OptionsReader``, which a scenario's `options FILE` shares): every failure — a
/// directory, a closed stdin, a read error, too many bytes — is `badInput`.
enum OptionsInput {
    static func read(_ source: String) throws(CLIError) -> [UInt8] {
        if source == "-", Output.closedAtStart.contains(STDIN_FILENO) { throw CLIError(.badInput, "--options -: stdin is closed") }
        do {
            return source == "-" ? try OptionsReader.readAll(STDIN_FILENO, name: "stdin")
                : try OptionsReader.read(path: source, name: "options file \(source)")
        } catch { throw CLIError(.badInput, error.message) }
    }
}
