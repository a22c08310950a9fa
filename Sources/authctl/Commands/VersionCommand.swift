import CBuildInfo
import Session

/// `authctl version` (also `authctl --version`): the version and the commit the binary was built from.
enum VersionCommand {
    static let spec = CommandSpec(
        name: "version", abstract: "print the version and the commit this binary was built from",
        discussion: """
            The commit is fixed when the binary is built (scripts/build-env.sh): twelve hex digits, \
            with "-dirty" when the checkout had uncommitted changes, or "unknown" for a build \
            that was not given one (a plain `swift build`).
            """,
        examples: ["authctl --version", "authctl --json version"],
        run: run)

    static let version = "0.3.0"
    /// The date of this version, for the man pages' `.TH` line (changed with `version`): a page
    /// made twice from one source is the same, byte for byte.
    static let date = "2026-12-02"
    static var commit: String { String(cString: authctl_build_commit()) }
    static var line: String { "authctl \(version) (commit \(commit))" }

    struct Entry: Encodable {
        let version: String
        let commit: String
    }

    static func run(_ args: ParsedArguments) throws(CLIError) {
        if args.flag(GlobalOptions.json) {
            try Output.data(JSONOutput.string(Entry(version: version, commit: commit)))
        } else {
            try Output.data(line)
        }
    }
}
