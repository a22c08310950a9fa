/// The options every command takes, before or after its name.
enum GlobalOptions {
    static let json = OptionSpec.flag("--json", "errors as one JSON object on stderr; listings and reports as JSON")
    static let vault = OptionSpec.value(
        "--vault", "DIR", "the vault directory (default $AUTHCTL_VAULT, else $XDG_DATA_HOME/authctl, else ~/.local/share/authctl)",
        completion: .directories)
    static let passphraseFile = OptionSpec.value(
        "--passphrase-file", "FILE", "read the vault passphrase from FILE (default $AUTHCTL_PASSPHRASE, else a prompt)",
        completion: .files)
    static let pinFile = OptionSpec.value(
        "--pin-file", "FILE", "read the biometric PIN from FILE (default $AUTHCTL_PIN, else a prompt)", completion: .files)
    static let device = OptionSpec.value(
        "--device", "NAME", "the account's device to act as (default $AUTHCTL_DEVICE, else the first device)")
    static let wait = OptionSpec.value(
        "--wait", "SECONDS", "how long to wait while another authctl process holds the vault (0-86400, default \(defaultWaitSeconds))")

    static let defaultWaitSeconds = 180
    static let all = [json, vault, device, passphraseFile, pinFile, wait]

    /// Whether `--json` is on the command line, read before parsing so that a parse error too is
    /// reported as JSON.
    static func wantsJSON(_ words: [String]) -> Bool {
        words.prefix { $0 != "--" }.contains(json.name)
    }
}
