import Glibc
import Session

/// Reads the options JSON of `--options FILE` or `--options -` (stdin), whole, up to ``limit``
/// (through ``OptionsReader``, which a scenario's `options FILE` shares): every failure — a
/// directory, a closed stdin, a read error, too many bytes — is `badInput`. A document of another
/// option read the same way (`--related-origins FILE`) is named as that option's.
enum OptionsInput {
    static func read(_ source: String, option: String = "--options", file: String = "options file") throws(CLIError) -> [UInt8] {
        if source == "-", Output.closedAtStart.contains(STDIN_FILENO) { throw CLIError(.badInput, "\(option) -: stdin is closed") }
        do {
            return source == "-" ? try OptionsReader.readAll(STDIN_FILENO, name: "stdin")
                : try OptionsReader.read(path: source, name: "\(file) \(EchoedInput.path(source))")
        } catch { throw CLIError(.badInput, error.message) }
    }
}
