import KeyVault
import VirtualAuthenticator

/// The simulated user: presence is always given; verification is the biometric PIN, taken from
/// `--pin-file`, `$AUTHCTL_PIN` or a no-echo prompt, and checked against the vault's verifier.
struct BiometricUser: UserInteraction {
    let verifier: [UInt8]?
    let pinFile: String?

    var canVerify: Bool { verifier != nil }

    func confirmPresence(_ purpose: UserPrompt) throws {}

    func verifyUser(_ purpose: UserPrompt) throws {
        guard let verifier else { throw AuthenticatorError(.notSupported, "no biometric PIN is enrolled in this vault") }
        let who = purpose.userName.map { " as \($0)" } ?? ""
        guard let pin = try SecretSource.read(file: pinFile, environment: "AUTHCTL_PIN",
                                              prompt: "Biometric PIN for \(purpose.rpId)\(who): ")
        else {
            throw AuthenticatorError(.notInteractive,
                "user verification needs the biometric PIN: set AUTHCTL_PIN, pass --pin-file, or run on a terminal")
        }
        guard PINVerifier.matches(pin, verifier: verifier) else {
            throw AuthenticatorError(.failed, "the biometric PIN did not match")
        }
    }
}
