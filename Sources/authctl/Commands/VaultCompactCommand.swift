/// `authctl vault compact`: rewrites the log with only the live records (it also happens by itself
/// as the log grows).
enum VaultCompactCommand {
    static let spec = CommandSpec(
        name: "compact", abstract: "rewrite the log with only the live records",
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        let compaction = try VaultSelection(args).session(.write, verifyingFirst: true).compactVault()
        Output.diagnostic("authctl: compacted the log from \(compaction.bytesBefore) to \(compaction.bytesAfter) bytes")
    }
}
