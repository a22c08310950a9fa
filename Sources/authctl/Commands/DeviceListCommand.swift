import VirtualAuthenticator
import Keychain
import Session

/// `authctl device list`: the account's devices and their sync state.
enum DeviceListCommand {
    static let spec = CommandSpec(name: "list", abstract: "list the account's devices (with --json: JSON)", run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        try Output.requireStdout()
        let status = try VaultSelection(args).session(.read).syncStatus()
        if args.flag(GlobalOptions.json) {
            try Output.data(JSONOutput.string(["devices": status.devices]))
            return
        }
        let rows = [["DEVICE", "ONLINE", "BIOMETRY", "PASSKEYS", "PENDING UP/DOWN"]] + status.devices.map { d in
            [TerminalText.escaped(d.name), d.online ? "yes" : "no", d.biometryEnrolled ? "enrolled" : "none", String(d.passkeys),
             "\(d.pendingUploads.count)/\(d.pendingDownloads.count)"]
        }
        for line in TextTable.lines(rows) { try Output.data(line) }
    }
}
