import KeyVault
import VirtualAuthenticator

/// `authctl init`: creates a vault and enrolls the simulated biometric PIN.
enum InitCommand {
    static func run(_ args: inout Arguments) throws {
        let options = try VaultOptions(&args)
        let kdfName = try args.value("--kdf") ?? KDFLevel.interactive.rawValue
        guard let kdf = KDFLevel(rawValue: kdfName) else {
            throw AuthenticatorError(.usage, "--kdf must be one of \(KDFLevel.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let noBiometry = args.flag("--no-biometry")
        let attempts = try args.value("--max-pin-attempts").map { text throws(AuthenticatorError) in
            guard let n = UInt32(text), (1...100).contains(n) else {
                throw AuthenticatorError(.usage, "--max-pin-attempts takes a whole number from 1 to 100")
            }
            return n
        } ?? BiometrySettings.defaultMaxAttempts
        try args.finish()

        let passphrase = try options.passphrase()
        var pin: SecureBytes? = nil
        if !noBiometry {
            guard let given = try SecretSource.read(file: options.pinFile, environment: "AUTHCTL_PIN", prompt: "Biometric PIN to enroll: ")
            else {
                throw AuthenticatorError(.notInteractive,
                    "enrolling the biometric PIN needs one: set AUTHCTL_PIN, pass --pin-file, run on a terminal, or pass --no-biometry")
            }
            try BiometryCommand.checkNewPIN(given)
            pin = given
        }
        // The settings record is part of creation: there is never a vault without one.
        _ = try Vault.create(at: options.path, passphrase: passphrase, kdf: kdf) { vault throws(VaultError) in
            let enrollment = try pin.map { p throws(VaultError) in try vault.enrollBiometry(pin: p).0 }
            return [BiometrySettings.newRecord(enrollment: enrollment, maxAttempts: attempts)]
        }
        Output.diagnostic("authctl: created vault at \(options.path) (kdf \(kdf.rawValue), biometry \(noBiometry ? "not enrolled" : "enrolled"))")
    }
}
