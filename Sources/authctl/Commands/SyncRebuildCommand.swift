import Session

/// `authctl sync rebuild`: forget what this vault knows of the account store and read it again.
enum SyncRebuildCommand {
    static let spec = CommandSpec(
        name: "rebuild", abstract: "forget this vault's copy of the store (cursor, queue, replicas) and read the store again",
        discussion: """
        What this vault's devices hold of other vaults' devices is then what the store gives back
        alone; what the store lacks of this vault's own changes uploads again.
        """,
        examples: ["authctl sync rebuild"], run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        try VaultSelection(args).session(.write, verifyingFirst: true).rebuildFromStore()
        Output.diagnostic("authctl: read the account store again")
    }
}
