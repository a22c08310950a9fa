import Session

/// `authctl sync set`: the account's delays, or one device's with `--device`.
enum SyncSetCommand {
    static let uploadDelay = OptionSpec.value("--upload-delay", "DURATION", "how long an upload takes: 250ms, 30s, 2m, 1h, 48h5m, or a range 1s..5s")
    static let downloadDelay = OptionSpec.value("--download-delay", "DURATION", "how long a download takes, likewise")
    static let seed = OptionSpec.value("--seed", "N", "the seed delays in a range are drawn with")
    static let backupState = OptionSpec.value(
        "--backup-state", "WHEN", "when a new passkey reports BS=1: after-upload (default) or immediate (as Apple does)",
        choices: ["after-upload", "immediate"])

    static let spec = CommandSpec(
        name: "set", abstract: "set sync delays (the account's, or --device's), the seed, the backup-state rule",
        discussion: "With --device NAME, the delays are that device's own; without, the account's (every device without its own).",
        options: [uploadDelay, downloadDelay, seed, backupState],
        examples: ["authctl sync set --upload-delay 2s --download-delay 1s..5s --seed 7", "authctl sync set --device laptop --download-delay 30s"],
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        func delay(_ option: OptionSpec) throws(CLIError) -> DelayRange? {
            guard let text = args.value(option) else { return nil }
            guard let range = DelayRange(parsing: text) else {
                throw CLIError(.usage, "\(option.name) takes a duration like 250ms, 30s, 2m, 1h, 48h5m, or a range like 1s..5s, not '\(EchoedInput.text(text))'")
            }
            return range
        }
        let up = try delay(uploadDelay), down = try delay(downloadDelay)
        var seedValue: UInt64? = nil
        if let text = args.value(seed) {
            guard let n = UInt64(text) else { throw CLIError(.usage, "--seed takes a whole number, not '\(EchoedInput.text(text))'") }
            seedValue = n
        }
        // Only an explicit --device names one here ($AUTHCTL_DEVICE is for acting as a device).
        let device = args.value(GlobalOptions.device)
        let session = try VaultSelection(args).session(.write)
        if up != nil || down != nil { try session.setDelays(upload: up, download: down, device: device) }
        if seedValue != nil || args.value(backupState) != nil {
            try session.setSyncOptions(seed: seedValue, backupStateImmediate: args.value(backupState).map { $0 == "immediate" })
        }
        Output.diagnostic("authctl: sync settings changed" + (device.map { " for device \($0)" } ?? ""))
    }
}
