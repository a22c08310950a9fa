import Session

/// `authctl device list`: the account's devices and their sync state.
enum DeviceListCommand {
    static let spec = CommandSpec(name: "list", abstract: "list the account's devices (with --json: JSON)", run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        try Output.requireStdout()
        let session = try VaultSelection(args).session(.read)
        if args.flag(GlobalOptions.json) {
            try Output.data(JSONOutput.string(DeviceListReport(try session.deviceReports())))
            return
        }
        let status = try session.syncStatus()
        // With devices in other vaults (the store's directory), a column says where each lives.
        let several = status.devices.contains { $0.vault != "this" }
        var rows = [["DEVICE", "ONLINE", "BIOMETRY", "PASSKEYS", "PENDING UP/DOWN"] + (several ? ["VAULT"] : [])]
        for d in status.devices {
            let here = d.vault == "this"
            var row: [String] = [TerminalText.escaped(d.name), d.online ? "yes" : "no", d.biometryEnrolled ? "enrolled" : "none"]
            row.append(d.passkeys.map { String($0) } ?? "-")
            row.append(here ? "\(d.pendingUploads.count)/\(d.pendingDownloads.count)" : "-")
            if several { row.append(here ? "this" : String(d.vault.prefix(8))) }
            rows.append(row)
        }
        for line in TextTable.lines(rows) { try Output.data(line) }
    }
}
