import Foundation
import Glibc
import Session

/// `authctl list`: the passkeys in the vault, as a table for people or JSON for scripts.
enum ListCommand {
    static let rpId = OptionSpec.value("--rp-id", "ID", "only the passkeys of this RP ID")

    static let spec = CommandSpec(
        name: "list", abstract: "list the passkeys in the vault (with --json: JSON for scripts)",
        discussion: "Listing never decrypts a private key.",
        options: [rpId], examples: ["authctl list", "authctl list --json --rp-id example.com"], run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        try Output.requireStdout()
        let vault = try VaultSelection(args)
        let credentials = try vault.session(.read).passkeys(device: vault.deviceName, rpId: args.value(rpId))
        if args.flag(GlobalOptions.json) {
            try Output.data(JSONOutput.string(PasskeyListReport(credentials)))
            return
        }
        // A table for people: what an RP supplied (the user name) is shown escaped, so it can
        // neither forge a row nor reach the terminal as a control sequence.
        let rows = [["CREDENTIAL ID", "RP ID", "USER", "CREATED (UTC)", "BACKUP"]] + credentials.map { c in
            [Base64URL.encode(c.id), TerminalText.escaped(c.rpId), TerminalText.shortened(c.userName), PasskeyReport.timestamp(c.createdAt),
             (c.backupEligible ? (c.backupState ? "synced" : "eligible") : "device-bound") + (c.hidden ? ", hidden" : "")]
        }
        for line in TextTable.lines(rows) { try Output.data(line) }
    }
}
