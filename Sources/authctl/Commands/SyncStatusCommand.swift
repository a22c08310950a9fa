import Session

/// `authctl sync status`: per device, what is pending and when it lands.
enum SyncStatusCommand {
    static let spec = CommandSpec(name: "status", abstract: "show each device's pending uploads and downloads, and when they land",
                                  examples: ["authctl sync status", "authctl --json sync status"], run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) { try show(args, access: .read) }

    /// The status, as a reader sees it (`sync status`) or after a writer's sync (`sync now`).
    @discardableResult
    static func show(_ args: ParsedArguments, access: Vault.Access) throws(CLIError) -> SyncStatus {
        try Output.requireStdout()
        let status = try VaultSelection(args).session(access).syncStatus()
        if args.flag(GlobalOptions.json) {
            try Output.data(JSONOutput.string(status))
            return status
        }
        try Output.text("account: upload \(status.uploadDelay), download \(status.downloadDelay), seed \(status.seed), backup state \(status.backupState)")
        if let problem = status.storeProblem { try Output.text("store problem: " + TerminalText.escaped(problem)) }
        for p in status.storeProblems where !p.isOpen {
            try Output.text("store problem healed (\(p.kind.rawValue)): " + TerminalText.escaped(p.message))
        }
        for d in status.devices {
            guard let passkeys = d.passkeys else {
                // Another vault's device, as that vault published it.
                try Output.text("\(TerminalText.escaped(d.name)) (vault \(d.vault.prefix(8))): \(d.online ? "online" : "offline"), upload \(d.uploadDelay), download \(d.downloadDelay), read through change \(d.acknowledged ?? 0)")
                continue
            }
            try Output.text("\(d.name): \(d.online ? "online" : "offline"), \(passkeys) passkey(s), upload \(d.uploadDelay), download \(d.downloadDelay)")
            for t in d.pendingUploads { try Output.text("  uploads " + describe(t, status.now)) }
            for t in d.pendingDownloads { try Output.text("  downloads " + describe(t, status.now)) }
        }
        return status
    }

    static func describe(_ t: SyncStatus.Transfer, _ now: UInt64) -> String {
        let what = (t.removal ? "removal of " : "") + "\(t.credentialId) (\(t.rpId)\(t.userName.isEmpty ? "" : ", \(t.userName)"))"
        guard let at = t.at else { return what + " when the device is back online" }
        return what + " in " + DelayRange.text(milliseconds: at - now)
    }
}
