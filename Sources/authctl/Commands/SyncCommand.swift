/// `authctl sync set | status`: how the account's devices sync.
enum SyncCommand {
    static let spec = CommandSpec(
        name: "sync", abstract: "sync delays and state: set them, see what is in flight",
        subcommands: [SyncSetCommand.spec, SyncStatusCommand.spec, SyncRebuildCommand.spec])
}
