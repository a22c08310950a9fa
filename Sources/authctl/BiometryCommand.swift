import KeyVault
import VirtualAuthenticator

/// `authctl biometry status | enroll | unlock`: the simulated Face ID.
enum BiometryCommand {
    static func run(_ args: inout Arguments, json: Bool) throws {
        switch args.positional() {
        case "status": try status(&args, json: json)
        case "enroll": try enroll(&args)
        case "unlock": try unlock(&args)
        default: throw AuthenticatorError(.usage, "biometry needs one of: status, enroll, unlock")
        }
    }

    static func describe(_ vault: Vault) -> [String: Any] {
        guard let settings = try? BiometrySettings(in: vault) else { return ["enrolled": false] }
        return ["enrolled": settings.enrollment != nil, "failures": Int(settings.failures),
                "maxAttempts": Int(settings.maxAttempts), "lockedOut": settings.lockedOut]
    }

    static func status(_ args: inout Arguments, json: Bool) throws {
        let options = try VaultOptions(&args)
        try args.finish()
        let facts = describe(try options.open(.read))
        if json { Output.data(ResponseJSON.encode(facts)); return }
        for key in facts.keys.sorted() { Output.data("\(key): \(facts[key]!)") }
    }

    /// Clears a lockout. The vault passphrase is the proof, as the device passcode is on a phone.
    static func unlock(_ args: inout Arguments) throws {
        let options = try VaultOptions(&args)
        try args.finish()
        let gate = try BiometricGate(vault: try options.open(.write), pinFile: nil, action: .approve)
        try gate.unlock()
        Output.diagnostic("authctl: biometry unlocked; failed attempts cleared")
    }

    /// A new PIN. With biometry enrolled, the current PIN (`--pin-file` / `$AUTHCTL_PIN`) unlocks
    /// the biometry key, which the new PIN then wraps: every passkey keeps working. `--reset`
    /// instead makes a new biometry key, for a forgotten PIN: passkeys made with user
    /// verification were sealed under the old one and are deleted, as a phone drops
    /// biometry-bound keychain items when the enrollment changes.
    static func enroll(_ args: inout Arguments) throws {
        let options = try VaultOptions(&args)
        let newPinFile = try args.value("--new-pin-file")
        let reset = args.flag("--reset")
        try args.finish()
        let vault = try options.open(.write)
        let gate = try BiometricGate(vault: vault, pinFile: options.pinFile, action: .approve)
        guard let newPin = try SecretSource.read(file: newPinFile, environment: "AUTHCTL_NEW_PIN", prompt: "New biometric PIN: ") else {
            throw AuthenticatorError(.notInteractive, "the new PIN is needed: set AUTHCTL_NEW_PIN, pass --new-pin-file, or run on a terminal")
        }
        try checkNewPIN(newPin)
        var dropped = [VaultRecord]()
        if gate.enrolled && !reset {
            try gate.verify(UserPrompt(ceremony: .registration, rpId: "biometry enrollment", userName: nil))
        } else if reset {
            dropped = try VaultCredentialStore(vault: vault).allCredentials().filter(\.requiresUserVerification).map { credential in
                let record = try VaultCredentialStore.record(of: credential, in: vault)
                return VaultRecord(id: record.id, kind: .tombstone, version: record.version + 1)
            }
        }
        _ = try gate.enroll(pin: newPin, reset: reset || !gate.enrolled, extra: dropped)
        Output.diagnostic("authctl: enrolled a new biometric PIN" + (reset ? "; deleted \(dropped.count) passkey(s) sealed under the old enrollment" : ""))
    }

    static func checkNewPIN(_ pin: SecureBytes) throws(AuthenticatorError) {
        guard pin.count >= 4 else { throw AuthenticatorError(.badInput, "the biometric PIN must be at least 4 bytes") }
    }
}
