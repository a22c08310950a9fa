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
        try args.finish()

        let passphrase = try options.passphrase()
        var verifier: [UInt8]? = nil
        if !noBiometry {
            guard let pin = try SecretSource.read(file: options.pinFile, environment: "AUTHCTL_PIN", prompt: "Biometric PIN to enroll: ")
            else {
                throw AuthenticatorError(.notInteractive,
                    "enrolling the biometric PIN needs one: set AUTHCTL_PIN, pass --pin-file, run on a terminal, or pass --no-biometry")
            }
            guard pin.count >= 4 else { throw AuthenticatorError(.badInput, "the biometric PIN must be at least 4 bytes") }
            verifier = try PINVerifier.make(pin, kdf: kdf)
        }
        let vault = try Vault.create(at: options.path, passphrase: passphrase, kdf: kdf)
        var fields: [UInt8: [UInt8]] = [:]
        if let verifier { fields[VaultSettings.pinVerifier] = verifier }
        try vault.commit([VaultRecord(id: VaultRecord.newId(), kind: .settings, fields: fields)])
        Output.diagnostic("authctl: created vault at \(options.path) (kdf \(kdf.rawValue), biometry \(noBiometry ? "not enrolled" : "enrolled"))")
    }
}
