/// `authctl sync now`: sync this vault with the store now, as a device's keychain does when it
/// wakes: upload what has landed, read what others uploaded, then show the status.
enum SyncNowCommand {
    static let spec = CommandSpec(
        name: "now", abstract: "sync with the account store now (upload what has landed, read the rest), then show the status",
        discussion: """
        Commands that only look (list, sync status, device list) read the store but write
        nothing, so a change this vault made while the store was out of reach, or whose upload
        delay has passed since, leaves the vault at the next command that writes — a ceremony, a
        change — or at this one. It reports as sync status does; when the store could not be
        reached it still reports, and fails with ioError (exit 74), since nothing was synced.
        """,
        examples: ["authctl sync now", "authctl --json sync now"], run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        let status = try SyncStatusCommand.show(args, access: .write)
        if !status.storeInUse, let problem = status.storeProblem { throw CLIError(.ioError, problem) }
    }
}
