/// The secrets the command line asks for, each with the flag, the variable and the prompt that can
/// give it, and what to say when none can.
enum Secret {
    case passphrase(vault: String)
    /// The passphrase of a vault being created (from the same places as the passphrase).
    case firstPassphrase(vault: String)
    case newPassphrase
    case pin(rpId: String, userName: String?)
    /// The first PIN, enrolled by `init` (from the same places as the PIN).
    case enrolledPIN
    case newPIN
    /// The passphrase an exported passkey is sealed under (asked twice when exporting).
    case transferPassphrase(exporting: Bool)
    /// The account's recovery secret, for a device joining from another machine without an
    /// enrolled device's approval.
    case recoverySecret

    var environment: EnvironmentVariable {
        switch self {
        case .passphrase, .firstPassphrase: .passphrase
        case .newPassphrase: .newPassphrase
        case .pin, .enrolledPIN: .pin
        case .newPIN: .newPIN
        case .transferPassphrase: .exportPassphrase
        case .recoverySecret: .recoverySecret
        }
    }

    var prompt: String {
        switch self {
        case .passphrase(let vault): "Vault passphrase for \(vault): "
        case .firstPassphrase(let vault): "Passphrase for the new vault at \(vault): "
        case .newPassphrase: "New vault passphrase: "
        case .pin(let rpId, let userName): "Biometric PIN for \(rpId)\(userName.map { " as \($0)" } ?? ""): "
        case .enrolledPIN: "Biometric PIN to enroll: "
        case .newPIN: "New biometric PIN: "
        case .transferPassphrase(let exporting): exporting ? "Passphrase to seal the exported passkey: " : "Passphrase of the exported passkey: "
        case .recoverySecret: "The account's recovery secret: "
        }
    }

    /// A secret being set rather than given: typed twice at a terminal, so one typo cannot lock
    /// the user out.
    var isNew: Bool {
        switch self {
        case .passphrase, .pin, .recoverySecret: false
        case .firstPassphrase, .newPassphrase, .enrolledPIN, .newPIN: true
        case .transferPassphrase(let exporting): exporting
        }
    }

    /// The `notInteractive` message: what is missing and the three ways to give it.
    func missing(fileOption: String) -> String {
        let what = switch self {
        case .passphrase: "the vault needs its passphrase"
        case .firstPassphrase: "the new vault needs a passphrase"
        case .newPassphrase: "the new passphrase is needed"
        case .pin: "user verification needs the biometric PIN"
        case .enrolledPIN: "enrolling the biometric PIN needs one"
        case .newPIN: "the new PIN is needed"
        case .transferPassphrase: "the exported passkey's passphrase is needed"
        case .recoverySecret: "joining with the recovery secret needs it"
        }
        let orNone = if case .enrolledPIN = self { ", run on a terminal, or pass --no-biometry" } else { ", or run on a terminal" }
        return "\(what): set \(environment.name), pass \(fileOption)\(orNone)"
    }
}
