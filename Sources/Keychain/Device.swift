import KeyVault
import VirtualAuthenticator

/// A passkey device: a platform authenticator whose keychain is an encrypted vault directory, with
/// a simulated biometric sensor. What the CLI does, a Swift program can do in-process:
///
///     let device = try Device.create(at: dir, passphrase: secret, kdf: .min, biometricPIN: pin)
///     let registration = try device.register(optionsJSON: options, origin: "https://example.com",
///                                             user: UserPolicy(pin: pin))
///     print(registration.json)   // RegistrationResponseJSON, as a page would POST it
///
/// A device holds its vault's lock for as long as it lives: exclusive when opened for writing
/// (every ceremony writes), shared for reading. Two devices on one vault in one process would wait
/// for each other; open one.
public final class Device {
    public let path: String
    let vault: Vault
    let store: VaultCredentialStore
    let sensor: BiometricSensor
    /// Where credential ids come from, and the date a passkey records; injected for tests.
    public var random: RandomSource
    public var clock: WallClock
    /// The Public Suffix List the client checks RP IDs against.
    public var suffixes: @Sendable () -> PublicSuffixList = { .system }

    private init(vault: Vault, random: RandomSource, clock: WallClock) throws(VaultError) {
        self.path = vault.path
        self.vault = vault
        self.store = VaultCredentialStore(vault: vault)
        self.sensor = try BiometricSensor(vault: vault)
        self.random = random
        self.clock = clock
    }

    /// Whether `path` holds a vault (asks for no passphrase).
    public static func exists(at path: String) -> Bool { Vault.exists(at: path) }

    /// Deletes the vault at `path` and every passkey in it, asking for no passphrase: for
    /// throw-away vaults (benchmarks, fixtures). Files the vault did not write are left alone.
    public static func removeVault(at path: String) throws(DeviceError) {
        do { try Vault.remove(at: path) } catch { throw DeviceError(error) }
    }

    /// The shortest biometric PIN an enrollment takes, in bytes.
    public static let minimumPINLength = 4
    /// Consecutive wrong PINs that lock biometry out, unless creation says otherwise.
    public static let defaultMaxPINAttempts = DeviceSettings.defaultMaxAttempts

    /// Creates a vault at `path` (absent or an empty directory) and, with `biometricPIN`, enrolls
    /// the simulated biometric: passkeys made with user verification then need that PIN.
    public static func create(at path: String, passphrase: SecureBytes, kdf: KDFLevel = .interactive,
                              biometricPIN: SecureBytes?, maxPINAttempts: UInt32 = Device.defaultMaxPINAttempts,
                              waiting: Vault.Waiting = Vault.Waiting(),
                              random: RandomSource = .live, clock: WallClock = .live) throws(DeviceError) -> Device {
        guard passphrase.count > 0 else { throw DeviceError(.invalidArgument, "the vault passphrase is empty") }
        if let biometricPIN { try checkNewPIN(biometricPIN) }
        guard (1...100).contains(maxPINAttempts) else {
            throw DeviceError(.invalidArgument, "the number of PIN attempts before lockout must be from 1 to 100")
        }
        do {
            // The settings record is part of creation: there is never a vault without one.
            let vault = try Vault.create(at: path, passphrase: passphrase, kdf: kdf, waiting: waiting) { vault throws(VaultError) in
                let enrollment = try biometricPIN.map { pin throws(VaultError) in try vault.enrollBiometry(pin: pin).0 }
                return [DeviceSettings.newRecord(enrollment: enrollment, maxAttempts: maxPINAttempts)]
            }
            return try Device(vault: vault, random: random, clock: clock)
        } catch { throw DeviceError(error) }
    }

    /// Opens the vault at `path`: `.write` for ceremonies and changes (writers take turns: this one
    /// holds the vault until it is released), `.read` to look (a reader waits for no prompt). When
    /// another process holds the vault, `waiting` says how long to wait and what to do meanwhile.
    public static func open(at path: String, passphrase: SecureBytes, access: Vault.Access = .write,
                            waiting: Vault.Waiting = Vault.Waiting(),
                            random: RandomSource = .live, clock: WallClock = .live) throws(DeviceError) -> Device {
        do {
            let vault = try Vault.open(at: path, passphrase: passphrase, access: access, waiting: waiting)
            return try Device(vault: vault, random: random, clock: clock)
        } catch { throw DeviceError(error) }
    }

    // MARK: - Ceremonies

    /// `navigator.credentials.create()` with PublicKeyCredentialCreationOptionsJSON (also wrapped as
    /// `{"publicKey": …}`) from `origin`; the response's ``RegistrationResponse/json`` is what a
    /// browser would hand the page.
    public func register(optionsJSON: [UInt8], origin: String, user: UserPolicy = UserPolicy(),
                         passkey: PasskeySettings = PasskeySettings(), fault: Fault? = nil) throws(DeviceError) -> RegistrationResponse {
        let configuration = AuthenticatorConfiguration(backupEligible: !passkey.deviceBound, backupState: !passkey.deviceBound,
                                                       signatureCounter: passkey.signatureCounter)
        do {
            let options = try CreationOptions(json: optionsJSON)
            return try client(user, configuration).create(options: options, origin: origin, fault: fault)
        } catch { throw DeviceError(error) }
    }

    /// `navigator.credentials.get()` with PublicKeyCredentialRequestOptionsJSON from `origin`.
    public func sign(optionsJSON: [UInt8], origin: String, user: UserPolicy = UserPolicy(),
                     fault: Fault? = nil) throws(DeviceError) -> AuthenticationResponse {
        do {
            let options = try RequestOptions(json: optionsJSON)
            return try client(user, AuthenticatorConfiguration()).get(options: options, origin: origin, fault: fault)
        } catch { throw DeviceError(error) }
    }

    private func client(_ policy: UserPolicy, _ configuration: AuthenticatorConfiguration)
        -> WebAuthnClient<VaultCredentialStore, SimulatedUser>
    {
        let user = SimulatedUser(sensor: sensor, policy: policy)
        return WebAuthnClient(authenticator: Authenticator(configuration: configuration, store: store, user: user,
                                                           random: random, clock: clock), suffixes: suffixes)
    }

    // MARK: - Passkeys

    /// The passkeys on this device, oldest first; only those of `rpId` when given (in any form a
    /// client accepts: `Bücher.example` finds the passkeys of `xn--bcher-kva.example`).
    public func credentials(rpId: String? = nil) throws(DeviceError) -> [Credential] {
        if let rpId {
            let ascii = (try? RelyingPartyIdentifier.ascii(rpId)) ?? rpId
            do { return try store.credentials(forRP: ascii) } catch { throw DeviceError(error) }
        }
        do { return try store.allCredentials() } catch { throw DeviceError(error) }
    }

    /// The passkey with credential id `id`, if this device has it.
    public func credential(id: [UInt8]) throws(DeviceError) -> Credential? {
        try credentials().first { $0.id == id }
    }

    /// Deletes the passkey with credential id `id` and returns what it was.
    @discardableResult
    public func delete(credentialId id: [UInt8]) throws(DeviceError) -> Credential {
        guard let credential = try credential(id: id) else {
            throw DeviceError(.noSuchCredential, "no passkey with id \(Base64URL.encode(id)) in the vault")
        }
        do { try store.delete([credential]) } catch { throw DeviceError(error) }
        return credential
    }

    /// Adds passkeys made elsewhere (without user verification), a thousand to a frame and flushed
    /// once: for building large vaults for benchmarks and fixtures. Not crash-safe part-way (see
    /// docs/vault-format.md, "bulk commits").
    public func addInBulk(_ passkeys: [(Credential, P256PrivateKey)]) throws(DeviceError) {
        do throws(VaultError) {
            var frames = [[VaultRecord]]()
            for (credential, key) in passkeys {
                guard !credential.requiresUserVerification else {
                    throw VaultError(.invalid, "bulk-added passkeys cannot require user verification")
                }
                frames.append([try store.newRecord(for: credential, privateKey: key, verification: nil)])
            }
            for start in stride(from: 0, to: frames.count, by: 1024) {
                try vault.commit(batches: Array(frames[start..<min(start + 1024, frames.count)]))
            }
        } catch { throw DeviceError(error) }
    }

    // MARK: - Biometry

    public var biometry: BiometryStatus { sensor.status }

    /// Clears a lockout: the vault passphrase that opened this device is the proof, as the device
    /// passcode is on a phone.
    public func unlockBiometry() throws(DeviceError) {
        do { try sensor.unlock() } catch { throw DeviceError(error) }
    }

    /// Enrolls `newPIN`. With biometry enrolled and `reset` false, the current PIN (from `user`)
    /// unlocks the biometry key, which the new PIN then wraps, so every passkey keeps working.
    /// With `reset`, a new biometry key is made, for a forgotten PIN: passkeys made with user
    /// verification were sealed under the old one and are deleted, as a phone drops
    /// biometry-bound keychain items when the enrollment changes. Returns how many were deleted.
    @discardableResult
    public func enrollBiometricPIN(_ newPIN: SecureBytes, user: UserPolicy = UserPolicy(), reset: Bool = false) throws(DeviceError) -> Int {
        try Self.checkNewPIN(newPIN)
        if sensor.enrolled && !reset {
            let prompt = UserPrompt(ceremony: .registration, rpId: "biometry enrollment", userName: nil)
            let unlock: BiometricSensor.Unlock
            do { unlock = try SimulatedUser(sensor: sensor, policy: user).verifyUser(prompt) } catch { throw DeviceError(error) }
            do { try sensor.enroll(pin: newPIN, keeping: unlock) } catch { throw DeviceError(error) }
            return 0
        }
        do {
            // One frame: the new enrollment and the passkeys it orphans go together.
            let dropped = reset ? try store.allCredentials().filter(\.requiresUserVerification) : []
            try sensor.enroll(pin: newPIN, keeping: nil, committing: try store.tombstones(for: dropped))
            return dropped.count
        } catch { throw DeviceError(error) }
    }

    static func checkNewPIN(_ pin: SecureBytes) throws(DeviceError) {
        guard pin.count >= minimumPINLength else {
            throw DeviceError(.invalidArgument, "the biometric PIN must be at least \(minimumPINLength) bytes")
        }
        guard pin.withUnsafeBytes({ !$0.contains(0) }) else {
            throw DeviceError(.invalidArgument, "the biometric PIN must not contain a NUL byte")
        }
    }

    // MARK: - The vault itself

    public var facts: Vault.Facts { vault.facts }

    /// Opening already authenticated every committed frame and parsed every record; this also
    /// opens every private key not sealed under the biometry key and compares it with the
    /// passkey's public key. Throws `vaultCorrupted` listing every problem.
    public func check() throws(DeviceError) -> VaultCheck {
        var problems = [String]()
        let all = try credentials()
        let checkable = all.filter { !$0.requiresUserVerification }
        for credential in checkable {
            do {
                let key = try store.unsealedKey(of: credential, verification: nil)
                if key.publicPoint != credential.publicPoint {
                    problems.append("credential \(Base64URL.encode(credential.id)): private key does not match its public key")
                }
            } catch {
                problems.append("credential \(Base64URL.encode(credential.id)): \(error.message)")
            }
        }
        guard problems.isEmpty else {
            throw DeviceError(.vaultCorrupted, "\(problems.count) problem(s): " + problems.joined(separator: "; "))
        }
        return VaultCheck(credentialsChecked: checkable.count, sealedUnderBiometry: all.count - checkable.count)
    }

    /// Rewrites the log with only the live records (it also happens by itself as the log grows).
    public func compact() throws(DeviceError) {
        do { try vault.compact() } catch { throw DeviceError(error) }
    }

    /// A new passphrase (and KDF level, when given) and a new vault key: every record is written
    /// again under the new key, so an old copy of the header with the old passphrase opens nothing.
    public func changePassphrase(to passphrase: SecureBytes, kdf: KDFLevel? = nil) throws(DeviceError) {
        guard passphrase.count > 0 else { throw DeviceError(.invalidArgument, "the new passphrase is empty") }
        do {
            try vault.changePassphrase(to: passphrase, kdf: kdf, sealedFields: [.credential: [CredentialRecord.Tag.sealedPrivateKey]])
        } catch { throw DeviceError(error) }
    }
}
