import Glibc

/// A variable of the environment the command line reads, with what it means. The readers name it
/// through this table and `authctl.1` lists the table under ENVIRONMENT, so a variable cannot be
/// read without being documented.
struct EnvironmentVariable: Sendable {
    let name: String
    let help: String

    /// Its value, or `nil` when it is not set.
    var value: String? { getenv(name).map { String(cString: $0) } }

    static let vault = EnvironmentVariable(
        name: "AUTHCTL_VAULT", help: "the vault directory, when --vault is not given (an empty value counts as unset)")
    static let device = EnvironmentVariable(
        name: "AUTHCTL_DEVICE", help: "the account's device to act as, when --device is not given (an empty value counts as unset)")
    static let passphrase = EnvironmentVariable(
        name: "AUTHCTL_PASSPHRASE", help: "the vault passphrase (also a new vault's, for init), when --passphrase-file is not given")
    static let newPassphrase = EnvironmentVariable(
        name: "AUTHCTL_NEW_PASSPHRASE", help: "the new passphrase of vault passwd, when --new-passphrase-file is not given")
    static let pin = EnvironmentVariable(
        name: "AUTHCTL_PIN", help: "the simulated biometric PIN (also the PIN init enrolls), when --pin-file is not given")
    static let newPIN = EnvironmentVariable(
        name: "AUTHCTL_NEW_PIN", help: "the new PIN of biometry enroll and device add, when --new-pin-file is not given")
    static let exportPassphrase = EnvironmentVariable(
        name: "AUTHCTL_EXPORT_PASSPHRASE",
        help: "the passphrase credential export seals a passkey under and credential import opens it with, when --export-passphrase-file is not given")
    static let recoverySecret = EnvironmentVariable(
        name: "AUTHCTL_RECOVERY_SECRET",
        help: "the account's recovery secret, for init --join --recovery (when --recovery-file is not given)")
    static let store = EnvironmentVariable(
        name: "AUTHCTL_STORE",
        help: "the account store init makes a new account on, when --store is not given: a postgresql:// address (#account to name one of several) or a directory from the root")
    static let userAction = EnvironmentVariable(
        name: "AUTHCTL_USER_ACTION",
        help: "what the simulated user does, when --user-action is not given: approve (the default), cancel, timeout or wrong-pin")
    static let instantTimeout = EnvironmentVariable(
        name: "AUTHCTL_INSTANT_TIMEOUT", help: "1: as --instant-timeout, a timeout ends at once instead of being waited for")
    static let ctap = EnvironmentVariable(
        name: "AUTHCTL_CTAP",
        help: "where security keys listen, comma-separated udp:HOST:PORT and unix:PATH entries: what CTAP clients (python-fido2's connector, libfido2's preload library) open, and where ctap serve listens when given neither --udp nor --socket")
    static let webKitBrowser = EnvironmentVariable(
        name: "AUTHCTL_WEBKIT_BROWSER",
        help: "authctl-webkit's path, the WebKitGTK browser webdriver has WebKitWebDriver launch, when --webkit-browser is not given (default: authctl-webkit beside authctl)")
    static let xdgDataHome = EnvironmentVariable(
        name: "XDG_DATA_HOME", help: "when absolute and AUTHCTL_VAULT is not set, the default vault is $XDG_DATA_HOME/authctl")
    static let home = EnvironmentVariable(
        name: "HOME", help: "when neither AUTHCTL_VAULT nor XDG_DATA_HOME gives it, the default vault is $HOME/.local/share/authctl")
    static let noProxy = EnvironmentVariable(
        name: "NO_PROXY",
        help: "hosts the HTTP steps of scenario run reach without a proxy, besides localhost, 127.0.0.1 and ::1 (also no_proxy); libcurl reads its usual proxy variables")
    static let opensslConf = EnvironmentVariable(
        name: "OPENSSL_CONF",
        help: "OpenSSL's configuration file; one that leaves no usable provider is refused (unknown, exit 70) before any command runs")

    static let indexSplitRecords = EnvironmentVariable(
        name: "AUTHCTL_INDEX_SPLIT_RECORDS",
        help: "revisions of one RP above which the vault's index splits the RP by user (1-1000000, default 1024): a tuning, read by the vault layer, not part of the format")

    static let storeChecks = EnvironmentVariable(
        name: "AUTHCTL_STORE_CHECKS",
        help: "off: devices read the account store unchecked, as authctl 0.3 did (no chain, snapshot list or anchor compared, nothing reported or asked for again) — only to show a checker the losses the checks prevent; never for use")

    /// Every variable, in the order `authctl.1` lists them.
    static let all = [vault, device, passphrase, newPassphrase, pin, newPIN, exportPassphrase, recoverySecret, store, userAction, instantTimeout,
                      indexSplitRecords, storeChecks, ctap, webKitBrowser, xdgDataHome, home, noProxy, opensslConf]
}
