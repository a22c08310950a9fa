import Session

/// `authctl device approve CODE`: lets a device on another machine join the account.
enum DeviceApproveCommand {
    static let code = ArgumentSpec(name: "CODE", help: "the code the joining device shows (XXXX-XXXX-XXXX)")

    static let spec = CommandSpec(
        name: "approve", abstract: "approve a device joining the account from another machine (init --join), with an enrolled device's PIN",
        discussion: """
        The joining device shows a one-time code; approving it here verifies the user on an enrolled
        device of this vault (--approve-with, default the first enrolled; its PIN from --pin-file or
        $AUTHCTL_PIN) and sends the account's keys to the joining device through the store, sealed
        for that device alone. A name a device of the account already has is refused, and the
        joining device is told so. A request whose joining device no longer waits (past its
        --approval-timeout) is refused as timedOut before any PIN is asked for.
        """,
        options: [DeviceAddCommand.approveWith],
        arguments: [code],
        examples: ["AUTHCTL_PIN=1111 authctl device approve 7KQ2-M9XD-4HRT"],
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        let session = try VaultSelection(args).session(.write)
        let name = try session.approveJoin(code: args.argument(0) ?? "", approvedBy: args.value(DeviceAddCommand.approveWith))
        Output.diagnostic("authctl: approved device \(name): it joins the account once it reads the answer")
    }
}
