import Session

/// `authctl capabilities`: what PublicKeyCredential.getClientCapabilities() gives a page on the device.
enum CapabilitiesCommand {
    static let spec = CommandSpec(
        name: "capabilities", abstract: "what getClientCapabilities() would give a page on this device (with --json: JSON)",
        discussion: """
        The WebAuthn Level 3 capability keys and extension:<name> for each extension, from the device's
        profile, biometry, passkey support and the account's other devices; and what
        isUserVerifyingPlatformAuthenticatorAvailable() and isConditionalMediationAvailable() answer.
        """,
        examples: ["authctl capabilities", "authctl --device laptop capabilities --json"], run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        try Output.requireStdout()
        let vault = try VaultSelection(args)
        let capabilities = try vault.session(.read).capabilities(device: vault.deviceName)
        if args.flag(GlobalOptions.json) {
            try Output.data(JSONOutput.string(CapabilitiesReport(capabilities)))
            return
        }
        let rows = [["CAPABILITY", "VALUE"]] + capabilities.values.map { [$0.key, String($0.value)] } + [
            ["isUserVerifyingPlatformAuthenticatorAvailable()", String(capabilities.userVerifyingPlatformAuthenticatorAvailable)],
            ["isConditionalMediationAvailable()", String(capabilities.conditionalMediationAvailable)],
        ]
        for line in TextTable.lines(rows) { try Output.data(line) }
    }
}
