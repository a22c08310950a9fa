import KeyVault
import SyncStore
import VirtualAuthenticator

/// A passkey device: a platform authenticator on one device of a synced keychain account, with its
/// simulated biometric sensor. What the CLI does, a Swift program can do in-process:
///
///     let device = try Device.create(at: dir, passphrase: secret, kdf: .min, biometricPIN: pin)
///     let registration = try device.register(optionsJSON: options, origin: "https://example.com",
///                                             user: UserPolicy(pin: pin))
///     print(registration.json)   // RegistrationResponseJSON, as a page would POST it
///
/// Its passkeys are what it holds now: the ones it made, and those sync has brought from the
/// account's other devices (``Account``). The account holds its vault's lock for as long as it
/// lives: a writer's turn when opened for writing (every ceremony writes); nothing, once read, for
/// a reader. Open one account per vault in a process.
public final class Device {
    public let account: Account
    let id: [UInt8]
    public let name: String

    init(account: Account, record: DeviceRecord) {
        self.account = account
        self.id = record.id
        self.name = record.name
    }

    func record() throws(DeviceError) -> DeviceRecord { try account.deviceRecord(id: id) }

    // MARK: - A vault with one device, in one call

    /// Whether `path` holds a vault (asks for no passphrase).
    public static func exists(at path: String) -> Bool { Vault.exists(at: path) }

    /// Returns when `path` holds a vault; else why not: `vaultNotFound` only for what is not
    /// there, `vaultInsecure` for another user's directory, `storage` for one that cannot be reached.
    package static func requireVault(at path: String) throws(DeviceError) {
        do { try Vault.requirePresent(at: path) } catch { throw DeviceError(error, path: path) }
    }

    /// Deletes the vault at `path`, its default account store, and every passkey in them, asking for
    /// no passphrase: for throw-away vaults (benchmarks, fixtures). Files they did not write are left.
    public static func removeVault(at path: String) throws(DeviceError) {
        do throws(StoreError) {
            if DirectoryStore.exists(at: path + "/cloud") { try DirectoryStore.remove(at: path + "/cloud") }
        } catch { throw DeviceError(error) }
        do { try Vault.remove(at: path) } catch { throw DeviceError(error) }
    }

    /// The shortest biometric PIN an enrollment takes, in bytes.
    public static let minimumPINLength = 4
    /// Consecutive wrong PINs that lock biometry out, unless creation says otherwise.
    public static let defaultMaxPINAttempts: UInt32 = 5
    /// What the first device is called when no name was given (and in vaults from before devices).
    public static let defaultDeviceName = "default"

    /// Creates a vault at `path` (absent or an empty directory) with its account and this, its first
    /// device (`deviceName`); with `biometricPIN`, the simulated biometric is enrolled.
    public static func create(at path: String, passphrase: SecureBytes, kdf: KDFLevel = .interactive,
                              deviceName: String = Device.defaultDeviceName, biometricPIN: SecureBytes?,
                              maxPINAttempts: UInt32 = Device.defaultMaxPINAttempts, waiting: Vault.Waiting = Vault.Waiting(),
                              random: RandomSource = .live, clock: WallClock = .live) throws(DeviceError) -> Device {
        try Account.create(at: path, passphrase: passphrase, kdf: kdf, deviceName: deviceName, biometricPIN: biometricPIN,
                           maxPINAttempts: maxPINAttempts, waiting: waiting, clock: clock, random: random).device()
    }

    /// Opens the vault at `path` as device `device` (the first device when `nil`): `.write` for
    /// ceremonies and changes, `.read` to look.
    public static func open(at path: String, passphrase: SecureBytes, access: Vault.Access = .write, device: String? = nil,
                            waiting: Vault.Waiting = Vault.Waiting(),
                            random: RandomSource = .live, clock: WallClock = .live) throws(DeviceError) -> Device {
        try Account.open(at: path, passphrase: passphrase, access: access, waiting: waiting, clock: clock, random: random).device(device)
    }

    // MARK: - Ceremonies

    /// `navigator.credentials.create()` with PublicKeyCredentialCreationOptionsJSON (also wrapped as
    /// `{"publicKey": …}`) from `origin` (or as `caller` says; its origin wins); the response's ``RegistrationResponse/json`` is what a
    /// browser would hand the page. The new passkey is backup eligible (unless device-bound); its
    /// BS flag is 1 once its first upload has landed in the account store (at once with the
    /// account's `backupStateImmediate`, or with no upload delay). With `attachment`
    /// `.crossPlatform`, this device registers for another one over hybrid (a phone making a
    /// passkey for a laptop's page): its PIN, its store; the response says so.
    public func register(optionsJSON: [UInt8], origin: String, user: UserPolicy = UserPolicy(),
                         passkey: PasskeySettings = PasskeySettings(), fault: Fault? = nil,
                         caller: CallerContext? = nil, attachment: AuthenticatorAttachment? = nil) throws(DeviceError) -> RegistrationResponse {
        let device = try record()
        try Self.requireSupport(device)
        let revisionId = account.reserveRevisionId()
        let time = account.eventTime
        let uploadsNow = account.backupStateImmediate || account.landing(of: revisionId, from: device, changedAt: time) == time
        var (profile, aaguid) = try account.profile(of: device)
        if let name = passkey.profile {
            guard let named = AuthenticatorProfile.named(name) else { throw DeviceError(.invalidArgument, "no profile named '\(EchoedInput.text(name))' (see authctl profiles)") }
            (profile, aaguid) = (named, named.aaguid)
        }
        guard passkey.aaguid == nil || passkey.aaguid!.count == 16 else {
            throw DeviceError(.invalidArgument, "an AAGUID is 16 bytes, not \(passkey.aaguid!.count)")
        }
        guard !passkey.u2f || profile.alternateAttestation != nil else {
            throw DeviceError(.invalidArgument, "profile \(profile.name) has no U2F attestation (security-key has)")
        }
        let backupEligible = profile.backupEligible && !passkey.deviceBound
        var configuration = AuthenticatorConfiguration(
            profile: profile, aaguid: passkey.aaguid ?? aaguid, backupEligible: backupEligible, backupState: uploadsNow,
            signCounter: passkey.counter ?? (passkey.signatureCounter && profile.signCounter == .zero ? .perCredential : profile.signCounter),
            attachment: attachment, u2f: passkey.u2f, minimumPINLength: Device.minimumPINLength)
        configuration.enterpriseRelyingParties = Set(passkey.enterpriseRelyingParties)
        let options: CreationOptions
        do { options = try CreationOptions(json: optionsJSON, strict: caller?.strict ?? false) } catch { throw DeviceError(error) }
        // The CA is opened only for a registration that will send a certificate: not for a
        // conditional create, nor for an enterprise request no policy permits (both send none).
        let effective: AttestationConveyance = caller?.mediation == .conditional ? .none
            : options.attestation == .enterprise && configuration.enterpriseRelyingParties.isEmpty ? .none : options.attestation
        if configuration.needsCertificate(for: effective) { configuration.attestationCA = try account.attestationCA() }
        let client = try client(device, user, configuration, revisionId: revisionId)
        do {
            return try client.create(options: options, caller: caller ?? CallerContext(origin: origin), fault: fault)
        } catch { throw DeviceError(error) }
    }

    /// `navigator.credentials.get()` with PublicKeyCredentialRequestOptionsJSON from `origin` (or as
    /// `caller` says: an iframe's call, a mediation, related origins; its origin wins). With
    /// `attachment` `.crossPlatform`, this device answers for another one over hybrid (a phone
    /// signing a laptop's sign-in): its passkeys, its flags, its PIN. Without, the attachment is
    /// its profile's.
    public func sign(optionsJSON: [UInt8], origin: String, user: UserPolicy = UserPolicy(),
                     fault: Fault? = nil, attachment: AuthenticatorAttachment? = nil,
                     caller: CallerContext? = nil) throws(DeviceError) -> AuthenticationResponse {
        let device = try record()
        try Self.requireSupport(device)
        let (profile, aaguid) = try account.profile(of: device)
        let configuration = AuthenticatorConfiguration(profile: profile, aaguid: aaguid, attachment: attachment)
        // No revision id is drawn for a sign-in: most write nothing, and one that does (a new
        // count, a large blob) draws its own as it writes. A read draws nothing from the seeded stream.
        let client = try client(device, user, configuration, revisionId: nil)
        do {
            return try client.get(options: try RequestOptions(json: optionsJSON, strict: caller?.strict ?? false), caller: caller ?? CallerContext(origin: origin), fault: fault)
        } catch { throw DeviceError(error) }
    }

    /// What a sign-in's options and caller make the browser refuse before it asks for a passkey
    /// (``WebAuthnClient/check(_:caller:fault:)``), for a conditional sign-in about to wait for the
    /// person's pick: the RP ID it would use.
    public func checkSign(optionsJSON: [UInt8], caller: CallerContext, fault: Fault? = nil,
                          attachment: AuthenticatorAttachment? = nil) throws(DeviceError) -> String {
        try beforePicking(optionsJSON, caller, attachment) { client, options throws(AuthenticatorError) in
            try client.check(options, caller: caller, fault: fault)
        }
    }

    /// What a sign-in's account picker offers on this device — a conditional sign-in's autofill
    /// list (``WebAuthnClient/offers(_:caller:fault:)``): the authenticator's candidates, oldest
    /// first. Refuses what ``checkSign(optionsJSON:caller:fault:attachment:)`` refuses.
    public func offers(optionsJSON: [UInt8], caller: CallerContext, fault: Fault? = nil,
                       attachment: AuthenticatorAttachment? = nil) throws(DeviceError) -> [Credential] {
        try beforePicking(optionsJSON, caller, attachment) { client, options throws(AuthenticatorError) in
            try client.offers(options, caller: caller, fault: fault)
        }
    }

    /// `body` on this device's client and a sign-in's options, before anyone picks a passkey.
    private func beforePicking<T>(_ optionsJSON: [UInt8], _ caller: CallerContext, _ attachment: AuthenticatorAttachment?,
                                  _ body: (WebAuthnClient<ViewCredentialStore, SimulatedUser>, RequestOptions) throws(AuthenticatorError) -> T)
        throws(DeviceError) -> T {
        let device = try record()
        try Self.requireSupport(device)
        let (profile, aaguid) = try account.profile(of: device)
        let configuration = AuthenticatorConfiguration(profile: profile, aaguid: aaguid, attachment: attachment)
        let client = try client(device, UserPolicy(), configuration, revisionId: nil)
        do { return try body(client, try RequestOptions(json: optionsJSON, strict: caller.strict)) } catch { throw DeviceError(error) }
    }

    private func client(_ device: DeviceRecord, _ policy: UserPolicy, _ configuration: AuthenticatorConfiguration,
                        revisionId: [UInt8]?) throws(DeviceError) -> WebAuthnClient<ViewCredentialStore, SimulatedUser> {
        let store = ViewCredentialStore(account: account, device: device, nextRevisionId: revisionId)
        let user = SimulatedUser(sensor: BiometricSensor(account: account, deviceId: id), policy: policy)
        return WebAuthnClient(authenticator: Authenticator(configuration: configuration, store: store, user: user,
                                                           random: account.random, clock: account.clock),
                              suffixes: account.suffixes)
    }

    func store() throws(DeviceError) -> ViewCredentialStore {
        ViewCredentialStore(account: account, device: try record(), nextRevisionId: nil)
    }

    // MARK: - Passkeys

    /// The passkeys this device holds now, oldest first; only those of `rpId` when given (in any
    /// form a client accepts: `Bücher.example` finds those of `xn--bcher-kva.example`).
    public func credentials(rpId: String? = nil) throws(DeviceError) -> [Credential] {
        let store = try store()
        do throws(VaultError) {
            guard let rpId else { return try store.allItems().map(\.credential) }
            let ascii = (try? RelyingPartyIdentifier.ascii(rpId)) ?? rpId
            return try store.items(rpIds: [ascii]).map(\.credential)
        } catch { throw DeviceError(error) }
    }

    /// The passkey with credential id `id`, if this device holds it. Found through the vault's
    /// credential-id lookup: it reads that passkey's RP, not every passkey.
    public func credential(id: [UInt8]) throws(DeviceError) -> Credential? {
        let store = try store()
        do { return try store.items(credentialId: id).first?.credential } catch {
            throw DeviceError(error)
        }
    }

    /// Deletes the passkey with credential id `id` on this device (the deletion syncs) and returns
    /// what it was.
    @discardableResult
    public func delete(credentialId id: [UInt8]) throws(DeviceError) -> Credential {
        let store = try store()
        let held: [DeviceView.Item]
        do { held = try store.items(credentialId: id) } catch { throw DeviceError(error) }
        guard let credential = held.map(\.credential).first(where: { $0.id == id }) else {
            throw DeviceError.noPasskey(id, on: name)
        }
        do { try store.delete([credential]) } catch { throw DeviceError(error) }
        return credential
    }

    /// Sets a passkey's backup flags by hand, as WebDriver's virtual authenticators allow: BE when
    /// `eligible` is given, and BS, which sync then no longer decides. BS is never 1 without BE
    /// (WebAuthn L3 §6.1.3). The change syncs like any other.
    @discardableResult
    public func setBackupFlags(credentialId id: [UInt8], eligible: Bool? = nil, state: Bool) throws(DeviceError) -> Credential {
        try setProperties(credentialId: id, eligible: eligible, state: state)
    }

    /// Sets a passkey's properties by hand, as WebDriver's Set Credential Properties does (WebAuthn
    /// L3 §11): BE and BS as ``setBackupFlags(credentialId:eligible:state:)`` sets them, each when
    /// given (BS stays as it is when only BE is), and its signature counter when `counter` is
    /// given — all in one change, or none when one is refused.
    @discardableResult
    public func setProperties(credentialId id: [UInt8], eligible: Bool? = nil, state: Bool? = nil,
                              counter: SignatureCounterSetting? = nil) throws(DeviceError) -> Credential {
        guard let credential = try credential(id: id) else {
            throw DeviceError.noPasskey(id, on: name)
        }
        let backupEligible = eligible ?? credential.backupEligible, backupState = state ?? credential.backupState
        guard backupEligible || !backupState else {
            throw DeviceError(.invalidArgument, "backup state 1 needs backup eligibility (BS is never set without BE)")
        }
        let flags = eligible != nil || state != nil
        let store = try store()
        do {
            return try store.revise(credential) {
                if flags {
                    $0.backupEligible = backupEligible
                    $0.backupState = backupState
                    $0.backupStateFixed = true
                }
                switch counter {
                case .counting(let from)?:
                    // Its own counter from now, not the authenticator's global one.
                    ($0.countsSignatures, $0.globalCounter, $0.signCount) = (true, false, from)
                case .noCounter?:
                    ($0.countsSignatures, $0.globalCounter, $0.signCount) = (false, false, 0)
                case nil: break
                }
            }
        } catch { throw DeviceError(error) }
    }

    /// Adds passkeys made elsewhere (without user verification) to this device, a thousand to a
    /// frame and flushed once: for building large vaults for benchmarks and fixtures. Not
    /// crash-safe part-way (see docs/vault-format.md, "bulk commits").
    package func addInBulk(_ passkeys: [(Credential, PrivateKey)]) throws(DeviceError) {
        let device = try record()
        do throws(VaultError) {
            var frames = [[VaultRecord]]()
            let time = account.eventTime
            for (credential, key) in passkeys {
                guard !credential.requiresUserVerification else {
                    throw VaultError(.invalid, "bulk-added passkeys cannot require user verification")
                }
                let id = account.newRevisionId()
                let der = SecureBytes(count: key.privateKeyDERCount)
                let length: Int
                do {
                    length = try der.withUnsafeMutableBytes { buffer throws(OpenSSLFailure) in try key.writePrivateKeyDER(into: buffer) }
                } catch { throw VaultError(.inconsistent, "OpenSSL could not encode a private key: \(error)") }  // a key it made
                let sealed = der.withUnsafeBytes { account.vault.sealSecret(UnsafeRawBufferPointer(rebasing: $0.prefix(length)), recordId: id) }
                frames.append([CredentialRecord.make(id: id, itemId: id, for: credential, sealedKey: sealed, device: device, changedAt: time,
                                                     created: CredentialRecord.creation(of: credential, now: time))])
            }
            // An account that follows a store queues them for upload, as any commit does.
            if var state = try account.storeLink.savedSyncState(in: account.vault), !frames.isEmpty {
                state.queue += frames.joined().map {
                    SyncState.Upload(revisionId: $0.id, rpId: Array($0.field(CredentialRecord.Tag.rpId) ?? []), landsAt: nil,
                                     userHandle: $0.field(CredentialRecord.Tag.userHandle).map(Array.init))
                }
                frames[frames.count - 1].append(state.record())
            }
            for start in stride(from: 0, to: frames.count, by: 1024) {
                try account.vault.commit(batches: Array(frames[start..<min(start + 1024, frames.count)]))
            }
        } catch { throw DeviceError(error) }
    }

    // MARK: - Biometry

    public var biometry: BiometryStatus { BiometricSensor(account: account, deviceId: id).status }

    /// Clears a lockout: the vault passphrase that opened this account is the proof, as the device
    /// passcode is on a phone.
    public func unlockBiometry() throws(DeviceError) {
        do { try BiometricSensor(account: account, deviceId: id).unlock() } catch { throw DeviceError(error) }
    }

    /// Enrolls `newPIN` on this device, wrapping the account's biometry key:
    /// - enrolled here and not `reset`: this device's current PIN (from `user`) unlocks the key;
    /// - a factory-reset device, unless `approvedBy` names an approver: its former PIN (from
    ///   `user`) recovers the key, as iCloud Keychain asks for the passcode of the old iPhone;
    /// - not enrolled here (a new device, a reset one with `approvedBy`, or `reset`) while another
    ///   device is: that device approves — `approvedBy` (default: the first enrolled one) verifies
    ///   with `approver`;
    /// - no device enrolled, or `reset` (a forgotten PIN) with no other device enrolled: a new key.
    ///   Passkeys made with user verification were sealed under the old one and are deleted, as a
    ///   phone drops biometry-bound keychain items when the enrollment changes. Returns how many.
    ///
    /// Synced after, as every change of a device is: the store's directory says at once whether
    /// the device is enrolled.
    @discardableResult
    public func enrollBiometricPIN(_ newPIN: SecureBytes, user: UserPolicy = UserPolicy(), reset: Bool = false,
                                   approvedBy: String? = nil, approver: UserPolicy = UserPolicy()) throws(DeviceError) -> Int {
        let dropped = try enroll(newPIN, user: user, reset: reset, approvedBy: approvedBy, approver: approver)
        do { try account.sync() } catch { throw DeviceError(error) }
        return dropped
    }

    private func enroll(_ newPIN: SecureBytes, user: UserPolicy, reset: Bool, approvedBy: String?, approver: UserPolicy) throws(DeviceError) -> Int {
        try Self.checkNewPIN(newPIN)
        if let approvedBy { _ = try account.deviceRecord(named: approvedBy) }
        let sensor = BiometricSensor(account: account, deviceId: id)
        let others = try account.deviceRecords().filter { $0.id != id && $0.enrollment != nil }
        if sensor.enrolled && !reset {
            let prompt = UserPrompt(ceremony: .registration, rpId: "a new PIN on \(name)", userName: nil)
            let unlock: BiometricSensor.Unlock
            do { unlock = try SimulatedUser(sensor: sensor, policy: user).verifyUser(prompt) } catch { throw DeviceError(error) }
            do { try sensor.enroll(try account.vault.enrollBiometry(pin: newPIN, keeping: unlock.biometryKey).0) } catch { throw DeviceError(error) }
            return 0
        }
        let former = try record().formerEnrollment != nil
        if !others.isEmpty && (approvedBy != nil || !former || reset) {
            let enrollment = try account.newEnrollment(newPIN, for: name, approvedBy: approvedBy, approver: approver)
            do { try sensor.enroll(enrollment) } catch { throw DeviceError(error) }
            return 0
        }
        if !reset, former {
            let prompt = UserPrompt(ceremony: .registration, rpId: "the former PIN of \(name)", userName: nil)
            let unlock: BiometricSensor.Unlock
            do { unlock = try sensor.verify(prompt, former: true) { () throws(AuthenticatorError) in try user.pin(prompt) } } catch {
                throw DeviceError(error)
            }
            do { try sensor.enroll(try account.vault.enrollBiometry(pin: newPIN, keeping: unlock.biometryKey).0) } catch { throw DeviceError(error) }
            return 0
        }
        // One frame: the new enrollment and the passkeys it orphans go together.
        let store = try store()
        let items: [DeviceView.Item]
        do { items = reset ? try store.allItems() : [] } catch { throw DeviceError(error) }
        let dropped = items.map(\.credential).filter(\.requiresUserVerification)
        let time = account.eventTime
        let device = try record()
        var removals = [VaultRecord]()
        for item in items where dropped.contains(where: { $0.id == item.credential.id }) {
            removals.append(CredentialRecord.removal(id: account.newRevisionId(), of: item.credential, itemId: item.itemId, device: device, changedAt: time))
        }
        do { try sensor.enroll(try account.vault.enrollBiometry(pin: newPIN).0, committing: removals) } catch { throw DeviceError(error) }
        return dropped.count
    }

    static func checkNewPIN(_ pin: SecureBytes) throws(DeviceError) {
        guard pin.count >= minimumPINLength else {
            throw DeviceError(.invalidArgument, "the biometric PIN must be at least \(minimumPINLength) bytes")
        }
        guard pin.withUnsafeBytes({ !$0.contains(0) }) else {
            throw DeviceError(.invalidArgument, "the biometric PIN must not contain a NUL byte")
        }
    }

    // MARK: - The vault itself (the account's, through this device)

    public var path: String { account.path }
    /// Counting the records reads every passkey.
    package var facts: Vault.Facts { get throws(DeviceError) { try account.facts } }
    public var random: RandomSource {
        get { account.random }
        set { account.random = newValue }
    }
    public var clock: WallClock {
        get { account.clock }
        set { account.clock = newValue }
    }
    public var suffixes: @Sendable () -> PublicSuffixList {
        get { account.suffixes }
        set { account.suffixes = newValue }
    }

    /// Reads the whole log, authenticating every committed frame, and compares it with the index
    /// (``Vault/verify()``); then opens the private key of every passkey this device holds that is
    /// not sealed under the biometry key, and compares it with the passkey's public key; and
    /// checks every passkey against what a registration can make (``PasskeyRules``: an RP ID that
    /// a large blob over the limit or one that does not open under its key, …).
    /// Throws `vaultCorrupted` listing every problem.
    public func check() throws(DeviceError) -> VaultCheck {
        do { try account.vault.verify() } catch { throw DeviceError(error) }
        let store = try store()
        var problems = [String]()
        let all: [Credential]
        do { all = try store.allItems().map(\.credential) } catch { throw DeviceError(error) }
        let checkable = all.filter { !$0.requiresUserVerification }
        for credential in all {
            // A passkey sealed under the biometry key is checked without its key (no PIN here):
            // its fields, and its large blob's size but not its seal.
            var key: PrivateKey? = nil
            if !credential.requiresUserVerification {
                do { key = try store.privateKeyWithoutVerification(of: credential) } catch {
                    problems.append("credential \(Base64URL.encode(credential.id)): \(error.message)")
                    continue
                }
            }
            // What no registration makes (an import from before import checked every field).
            for problem in PasskeyRules.problems(of: credential, key: key) {
                problems.append("credential \(Base64URL.encode(credential.id)): \(problem)")
            }
        }
        guard problems.isEmpty else {
            throw DeviceError(.vaultCorrupted, "\(problems.count) problem(s): " + problems.joined(separator: "; "))
        }
        return VaultCheck(credentialsChecked: checkable.count, sealedUnderBiometry: all.count - checkable.count)
    }

    public func compact() throws(DeviceError) { try account.compact() }

    public func changePassphrase(to passphrase: SecureBytes, kdf: KDFLevel? = nil) throws(DeviceError) {
        try account.changePassphrase(to: passphrase, kdf: kdf)
    }
}
