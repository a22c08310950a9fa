import Session

/// The person at the terminal, at whichever device of the vault a command runs on: the PIN comes
/// from `--pin-file`, `$AUTHCTL_PIN` or a prompt, read only when the sensor asks for it (so they
/// can type any device's); a prompt's timeout is waited out in real time, a signal ending the wait
/// (`--instant-timeout`: at once).
final class TerminalPeople: People {
    private let vault: VaultSelection

    init(_ vault: VaultSelection) { self.vault = vault }

    func user(at device: String, doing person: PersonRequest) -> UserPolicy {
        UserPolicy(action: person.action, account: person.account, pin: { [vault] prompt throws(AuthenticatorError) in try vault.pin(prompt) },
                   wait: (person.instantTimeout ? TimeoutPassing.atOnce : .waited(Interruption.outwait)).wait)
    }

    func knowsPIN(of device: String) -> Bool { true }
}
