/// `authctl vault compact`: rewrites the log with only the live records (it also happens by itself
/// as the log grows).
enum VaultCompactCommand {
    static let spec = CommandSpec(
        name: "compact", abstract: "rewrite the log with only the live records",
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        let device = try VaultSelection(args).open(.write, verifyingFirst: true)
        let before: Int, after: Int
        do {
            before = try device.facts.committedBytes
            try device.compact()
            after = try device.facts.committedBytes
        } catch { throw CLIError(error) }
        Output.diagnostic("authctl: compacted the log from \(before) to \(after) bytes")
    }
}
