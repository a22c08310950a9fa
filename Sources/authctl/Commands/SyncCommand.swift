/// `authctl sync set | status | now | rebuild`: how the account's devices sync.
enum SyncCommand {
    static let spec = CommandSpec(
        name: "sync", abstract: "sync delays and state: set them, see what is in flight",
        subcommands: [SyncSetCommand.spec, SyncStatusCommand.spec, SyncNowCommand.spec, SyncRebuildCommand.spec])
}
