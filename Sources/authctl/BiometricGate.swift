import Glibc
import KeyVault
import VirtualAuthenticator

/// The vault's settings record, typed: the biometric enrollment and the failure count.
/// Field tags are in docs/vault-format.md.
struct BiometrySettings {
    static let salt: UInt8 = 2, wrappedKey: UInt8 = 3, failures: UInt8 = 4, maxAttempts: UInt8 = 5
    static let opslimit: UInt8 = 6, memlimit: UInt8 = 7
    static let defaultMaxAttempts: UInt32 = 5

    var record: VaultRecord
    var enrollment: BiometryEnrollment?
    var failures: UInt32
    var maxAttempts: UInt32

    var lockedOut: Bool { enrollment != nil && failures >= maxAttempts }

    init(in vault: Vault) throws {
        let all = vault.records(kind: .settings)
        guard all.count == 1, let record = all.first else {
            throw AuthenticatorError(.vaultCorrupted, "the vault has \(all.count) settings records; it must have exactly one")
        }
        self.record = record
        let fields = record.fields
        if let salt = fields[Self.salt], let wrapped = fields[Self.wrappedKey] {
            enrollment = try BiometryEnrollment(
                salt: salt, wrappedKey: wrapped, opslimit: try Self.number(fields, Self.opslimit, UInt64.self),
                memlimit: try Self.number(fields, Self.memlimit, UInt64.self))
        }
        failures = fields[Self.failures] == nil ? 0 : try Self.number(fields, Self.failures, UInt32.self)
        maxAttempts = fields[Self.maxAttempts] == nil ? Self.defaultMaxAttempts : try Self.number(fields, Self.maxAttempts, UInt32.self)
    }

    static func newRecord(enrollment: BiometryEnrollment?, maxAttempts: UInt32) -> VaultRecord {
        var settings = VaultRecord(id: VaultRecord.newId(), kind: .settings)
        settings.fields = fields(of: [:], enrollment: enrollment, failures: 0, maxAttempts: maxAttempts)
        return settings
    }

    /// The next version of the settings record, as it stands now; tags this version does not
    /// know are kept as they were.
    var updatedRecord: VaultRecord {
        var next = record
        next.version += 1
        next.fields = Self.fields(of: record.fields, enrollment: enrollment, failures: failures, maxAttempts: maxAttempts)
        return next
    }

    private static func fields(of existing: [UInt8: [UInt8]], enrollment: BiometryEnrollment?, failures: UInt32,
                               maxAttempts: UInt32) -> [UInt8: [UInt8]] {
        var fields = existing
        fields[Self.failures] = bigEndian(failures)
        fields[Self.maxAttempts] = bigEndian(maxAttempts)
        fields[Self.salt] = enrollment?.salt
        fields[Self.wrappedKey] = enrollment?.wrappedKey
        fields[Self.opslimit] = enrollment.map { bigEndian($0.opslimit) }
        fields[Self.memlimit] = enrollment.map { bigEndian($0.memlimit) }
        return fields
    }

    private static func number<T: FixedWidthInteger>(_ fields: [UInt8: [UInt8]], _ tag: UInt8, _: T.Type) throws -> T {
        guard let bytes = fields[tag], bytes.count == MemoryLayout<T>.size else {
            throw AuthenticatorError(.vaultCorrupted, "settings field \(tag) is missing or has the wrong length")
        }
        return bytes.reduce(T(0)) { $0 << 8 | T($1) }
    }
}

/// The simulated biometric check. A PIN is right when it unwraps the biometry key; every wrong
/// PIN is counted in the sealed vault before the command fails, so a restart does not forget it,
/// and the count is read and written under the vault's exclusive lock, so parallel processes
/// cannot race past it. At `maxAttempts` consecutive failures biometry locks out until
/// `authctl biometry unlock`.
final class BiometricGate {
    let vault: Vault
    private(set) var settings: BiometrySettings
    let pinFile: String?
    let action: UserAction
    /// The biometry key, once a PIN was verified during this command.
    private(set) var biometryKey: SecureBytes?

    init(vault: Vault, pinFile: String?, action: UserAction) throws {
        self.vault = vault
        self.settings = try BiometrySettings(in: vault)
        self.pinFile = pinFile
        self.action = action
    }

    var enrolled: Bool { settings.enrollment != nil }

    func verify(_ purpose: UserPrompt) throws {
        guard let enrollment = settings.enrollment else {
            throw AuthenticatorError(.notHandled, "no biometric PIN is enrolled in this vault")
        }
        guard !settings.lockedOut else {
            throw AuthenticatorError(.biometryLockout,
                "biometry is locked out after \(settings.failures) failed attempts; run 'authctl biometry unlock' with the vault passphrase")
        }
        let pin: SecureBytes
        if action == .wrongPIN {
            pin = SecureBytes(count: 32)  // the wrong finger: 32 zero bytes, never an enrolled PIN
        } else {
            let who = purpose.userName.map { " as \($0)" } ?? ""
            guard let given = try SecretSource.read(file: pinFile, environment: "AUTHCTL_PIN",
                                                    prompt: "Biometric PIN for \(purpose.rpId)\(who): ")
            else {
                throw AuthenticatorError(.notInteractive,
                    "user verification needs the biometric PIN: set AUTHCTL_PIN, pass --pin-file, or run on a terminal")
            }
            pin = given
        }
        // Counted before the PIN is tried, as CTAP counts pinRetries: a process that dies, or a
        // write that fails, after a wrong guess cannot leave the guess uncounted.
        try record(failures: settings.failures + 1)
        guard let key = try vault.unlockBiometry(pin: pin, enrollment) else {
            let left = settings.maxAttempts - min(settings.failures, settings.maxAttempts)
            throw AuthenticatorError(.failed, "the biometric PIN did not match; " + (left == 0
                ? "biometry is now locked out until 'authctl biometry unlock'"
                : "\(left) attempt\(left == 1 ? "" : "s") left before lockout"))
        }
        try record(failures: 0)
        biometryKey = key
    }

    /// Writes the failure count; only an exclusively opened vault can count, which every
    /// command that verifies the user opens.
    private func record(failures: UInt32) throws {
        settings.failures = failures
        let next = settings.updatedRecord
        try vault.commit([next])
        settings.record = next
    }

    /// `authctl biometry unlock`: clears the count.
    func unlock() throws { try record(failures: 0) }

    /// `authctl biometry enroll`: a new PIN wraps the biometry key this command unlocked (or a
    /// new one with `reset`), clearing the count.
    func enroll(pin: SecureBytes, reset: Bool, extra: [VaultRecord] = []) throws -> SecureBytes {
        let (enrollment, key) = try vault.enrollBiometry(pin: pin, keeping: reset ? nil : biometryKey)
        settings.enrollment = enrollment
        settings.failures = 0
        let next = settings.updatedRecord
        try vault.commit(extra + [next])
        settings.record = next
        biometryKey = key
        return key
    }
}

/// What the simulated user does at the prompt: `--user-action` / `$AUTHCTL_USER_ACTION`.
enum UserAction: String, CaseIterable {
    case approve, cancel, timeout
    case wrongPIN = "wrong-pin"
}

/// The person at the prompt: presence as `--user-action` says; verification through the gate.
struct BiometricUser: UserInteraction {
    let gate: BiometricGate
    let action: UserAction
    let instantTimeout: Bool
    /// WebAuthn's recommended default when the options give no timeout (L3 §5.4, `timeout`).
    static let defaultTimeoutMilliseconds = 300_000

    var canVerify: Bool { gate.enrolled }

    func confirmPresence(_ purpose: UserPrompt) throws {
        switch action {
        case .approve, .wrongPIN: return
        case .cancel:
            throw AuthenticatorError(.canceled, "the user canceled the \(purpose.ceremony.rawValue) prompt for \(purpose.rpId)")
        case .timeout:
            let milliseconds = purpose.timeoutMilliseconds ?? Self.defaultTimeoutMilliseconds
            if !instantTimeout { sleepMilliseconds(milliseconds) }
            throw AuthenticatorError(.timedOut, "the user did not answer the \(purpose.ceremony.rawValue) prompt within \(milliseconds) ms")
        }
    }

    func verifyUser(_ purpose: UserPrompt) throws { try gate.verify(purpose) }
}

/// `--user-action`, `--instant-timeout` (and their variables), shared by register and sign.
struct InteractionOptions {
    var action: UserAction
    var instantTimeout: Bool

    init(_ args: inout Arguments) throws(AuthenticatorError) {
        let name = try args.value("--user-action") ?? environment("AUTHCTL_USER_ACTION") ?? "approve"
        guard let action = UserAction(rawValue: name) else {
            throw AuthenticatorError(.usage, "--user-action must be one of \(UserAction.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        self.action = action
        instantTimeout = args.flag("--instant-timeout") || environment("AUTHCTL_INSTANT_TIMEOUT") == "1"
    }
}

/// Sleeps for `milliseconds` (any Int: negative is none; whatever the options say, no overflow).
private func sleepMilliseconds(_ milliseconds: Int) {
    var request = timespec(tv_sec: max(0, milliseconds) / 1000, tv_nsec: (max(0, milliseconds) % 1000) * 1_000_000)
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0, errno == EINTR { request = remaining }
}
