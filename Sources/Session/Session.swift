@_spi(ByteOrder) import ByteOrder
import Keychain
import VirtualAuthenticator

/// The one door every front end goes through — the command line, a scenario, and what serves
/// requests next: typed requests in, typed responses and ``SessionError``s out, over one open
/// ``Account``. Options are built here (``CreationOptionsBuilder``, ``RequestOptionsBuilder``),
/// hybrid is decided here (one rule for both ceremonies), and every lower layer's error is mapped
/// here, by type, to the one table. A front end only parses its input into requests and prints
/// what comes back.
///
///     let session = Session(account: account)
///     let answer = try session.sign(SignRequest(caller: CallerContext(origin: "https://example.com"),
///                                               options: .built(RequestOptionsBuilder())))
///     print(answer.json)
public final class Session {
    /// The account the session is open on: only the request layer reaches it, front ends go
    /// through the session's requests.
    let account: Account
    /// The virtual clock a scenario's session runs on (``ClockRequest``); `nil` on the real one.
    public let clock: VirtualClock?
    /// The people at the account's devices, as the front end knows them.
    public let people: any People
    /// Where built options' challenges and user ids come from.
    public let builtOptions: BuiltOptionsRandomness
    /// How many blocks a seeded ``builtOptions`` stream has given.
    private var drawn: UInt64 = 0
    /// The warnings ``takeWarnings()`` has given (``warnings``).
    private var taken = Set<String>()
    /// The conditional sign-in pending on each device, as long as its front end holds it.
    var conditionals = [String: Pending]()

    struct Pending {
        weak var signIn: ConditionalSignIn?
    }

    public init(account: Account, clock: VirtualClock? = nil, builtOptions: BuiltOptionsRandomness = .live, people: any People = Nobody()) {
        self.account = account
        self.clock = clock
        self.builtOptions = builtOptions
        self.people = people
    }

    /// What the store checks found, as plain strings, each once: the store problem (the store set
    /// aside, and why), then each thing found wrong with the store, in the order it was found.
    /// Every front end shows them: the command line on stderr, the server as a `warnings` member
    /// of its JSON, a scenario in its report.
    public var warnings: [String] {
        var found = [String]()
        if let problem = account.storeProblem { found.append(problem) }
        for warning in account.storeWarnings.map({ "the account store: " + $0 }) where !found.contains(warning) { found.append(warning) }
        return found
    }

    /// The ``warnings`` not taken before: what the requests since the last call (or the opening)
    /// found, for a front end that shows each once, with the answer that found it.
    public func takeWarnings() -> [String] {
        let fresh = warnings.filter { !taken.contains($0) }
        taken.formUnion(fresh)
        return fresh
    }

    /// The person at `device` for one request.
    private func user(_ device: String, _ person: PersonRequest) -> UserPolicy { people.user(at: device, doing: person) }

    /// The device that approves a new device's or a new PIN's enrollment when a request names none:
    /// the first other device enrolled with a PIN that the people know (`nil`: none).
    public func defaultApprover(for device: String) -> String? {
        account.defaultApprover(for: device) { people.knowsPIN(of: $0) }
    }

    /// `count` bytes (at most 32) for built options.
    private func draw(_ count: Int) -> [UInt8] {
        switch builtOptions {
        case .live:
            return RandomSource.live.bytes(count)
        case .seeded(let seed):
            drawn += 1
            let block = SHA256.hash(Array("AUTHCTL-CHALLENGE".utf8) + BigEndianBytes.of(seed) + BigEndianBytes.of(drawn))
            return Array(block.prefix(count))
        }
    }


    // MARK: - Ceremonies

    /// A registration: on `device`, or over hybrid on `via` (its PIN, its store).
    public func register(_ request: RegisterRequest) throws(SessionError) -> CeremonyResponse {
        let devices = try Hybrid.resolve(device: request.device, via: request.via, in: account)
        let options = switch request.options {
        case .json(let json): json
        case .built(let builder): builder.json(drawing: draw)
        }
        do {
            try devices.requireClientSupport()
            let maker = devices.authenticator
            let response = try maker.register(optionsJSON: options, origin: request.caller.origin,
                                              user: user(maker.name, request.person), passkey: request.passkey,
                                              fault: request.fault, caller: request.caller, attachment: devices.attachment)
            return CeremonyResponse(response, fault: request.fault)
        } catch { throw SessionError(error) }
    }

    /// A sign-in: on `device`, or over hybrid on `via` (its passkeys, its flags, its PIN), even
    /// when `device` holds no copy.
    public func sign(_ request: SignRequest) throws(SessionError) -> CeremonyResponse {
        try signing(request) { devices, options throws(DeviceError) in
            let signer = devices.authenticator
            let response = try signer.sign(optionsJSON: options, origin: request.caller.origin, user: user(signer.name, request.person),
                                           fault: request.fault, attachment: devices.attachment, caller: request.caller)
            return CeremonyResponse(response, fault: request.fault)
        }
    }

    /// What a sign-in's options and caller make the browser refuse before it asks for a passkey,
    /// for a conditional sign-in about to wait for the person's pick: the RP ID it would use.
    public func checkSign(_ request: SignRequest) throws(SessionError) -> String {
        try signing(request) { devices, options throws(DeviceError) in
            try devices.authenticator.checkSign(optionsJSON: options, caller: request.caller, fault: request.fault,
                                                attachment: devices.attachment)
        }
    }

    /// What a sign-in's account picker offers — a conditional sign-in's autofill list: the
    /// authenticator's own candidates (``Device/offers(optionsJSON:caller:fault:attachment:)``).
    func offers(_ request: SignRequest) throws(SessionError) -> [Credential] {
        try signing(request) { devices, options throws(DeviceError) in
            try devices.authenticator.offers(optionsJSON: options, caller: request.caller, fault: request.fault,
                                             attachment: devices.attachment)
        }
    }

    /// A request's options JSON: given, or built now.
    func optionsJSON(_ source: OptionsSource<RequestOptionsBuilder>) -> [UInt8] {
        switch source {
        case .json(let json): json
        case .built(let builder): builder.json(drawing: draw)
        }
    }

    /// `body` on the devices a sign-in runs on, a client there, with its options JSON.
    private func signing<T>(_ request: SignRequest, _ body: (Hybrid, [UInt8]) throws(DeviceError) -> T) throws(SessionError) -> T {
        let devices = try Hybrid.resolve(device: request.device, via: request.via, in: account)
        let options = optionsJSON(request.options)
        do {
            try devices.requireClientSupport()
            return try body(devices, options)
        } catch { throw SessionError(error) }
    }

    /// Either ceremony.
    public func perform(_ request: CeremonyRequest) throws(SessionError) -> CeremonyResponse {
        switch request {
        case .register(let r): try register(r)
        case .sign(let r): try sign(r)
        }
    }

    // MARK: - Passkeys

    /// The passkeys `device` holds now, oldest first (only `rpId`'s when given).
    public func passkeys(device: String? = nil, rpId: String? = nil) throws(SessionError) -> [Credential] {
        do { return try account.device(device).credentials(rpId: rpId) } catch { throw SessionError(error) }
    }

    /// The passkey with id `id` on `device`; `notHandled` when it holds none.
    public func passkey(device: String? = nil, id: [UInt8]) throws(SessionError) -> Credential {
        let held: Credential?
        do { held = try account.device(device).credential(id: id) } catch { throw SessionError(error) }
        guard let held else { throw SessionError(DeviceError.noPasskey(id, on: try name(of: device))) }
        return held
    }

    /// Deletes a passkey on `device` (the deletion syncs); what it was.
    @discardableResult
    public func delete(device: String? = nil, credentialId id: [UInt8]) throws(SessionError) -> Credential {
        do { return try account.device(device).delete(credentialId: id) } catch { throw SessionError(error) }
    }

    /// Sets a passkey's backup flags by hand (BE when `eligible` is given, and BS).
    @discardableResult
    public func setBackupFlags(device: String? = nil, credentialId id: [UInt8], eligible: Bool?, state: Bool) throws(SessionError) -> Credential {
        do { return try account.device(device).setBackupFlags(credentialId: id, eligible: eligible, state: state) } catch {
            throw SessionError(error)
        }
    }

    /// Sets a passkey's backup flags and signature counter by hand (WebDriver's Set Credential
    /// Properties, WebAuthn L3 §11): each one given, in one change.
    public func setCredentialProperties(device: String? = nil, credentialId id: [UInt8], eligible: Bool?, state: Bool?,
                                        counter: SignatureCounterSetting?) throws(SessionError) -> Credential {
        do { return try account.device(device).setProperties(credentialId: id, eligible: eligible, state: state, counter: counter) } catch {
            throw SessionError(error)
        }
    }

    /// A passkey sealed under `passphrase` for another vault; `person` verifies first when it was
    /// made with user verification.
    public func exportPasskey(device: String? = nil, credentialId id: [UInt8], passphrase: SecureBytes, kdf: KDFLevel = .interactive,
                              person: PersonRequest = PersonRequest()) throws(SessionError) -> [UInt8] {
        do {
            let holder = try account.device(device)
            return try holder.exportPasskey(credentialId: id, passphrase: passphrase, kdf: kdf, user: user(holder.name, person))
        } catch { throw SessionError(error) }
    }

    /// A passkey's private key as PKCS #8 (WebDriver's Get Credentials); `person` verifies first
    /// when it was made with user verification.
    public func privateKey(device: String? = nil, credentialId id: [UInt8], person: PersonRequest = PersonRequest()) throws(SessionError) -> [UInt8] {
        do {
            let holder = try account.device(device)
            return try holder.privateKeyPKCS8(credentialId: id, user: user(holder.name, person))
        } catch { throw SessionError(error) }
    }

    /// Adds an exported passkey to `device`; what it is.
    public func importPasskey(device: String? = nil, _ envelope: [UInt8], passphrase: SecureBytes,
                              person: PersonRequest = PersonRequest()) throws(SessionError) -> Credential {
        do {
            let holder = try account.device(device)
            return try holder.importPasskey(envelope, passphrase: passphrase, user: user(holder.name, person))
        } catch { throw SessionError(error) }
    }

    /// Adds a passkey made elsewhere, from its private key, to `device` (WebDriver's Add
    /// Credential); what it is.
    @discardableResult
    public func addPasskey(device: String? = nil, _ added: AddedPasskey) throws(SessionError) -> Credential {
        do { return try account.device(device).addPasskey(added) } catch { throw SessionError(error) }
    }

    /// An RP's signal (WebAuthn L3 §5.1.10) from a page at `origin` on `device`.
    @discardableResult
    public func signal(device: String? = nil, _ kind: Signal.Kind, optionsJSON: [UInt8], origin: String,
                       relatedOrigins: RelatedOrigins.Source? = nil) throws(SessionError) -> SignalEffect {
        do { return try account.device(device).signal(kind, optionsJSON: optionsJSON, origin: origin, relatedOrigins: relatedOrigins) } catch {
            throw SessionError(error)
        }
    }

    /// The CA the account's attestations with x5c chain to (docs/profiles.md): `ca export`. A vault
    /// from before profiles has none until a writer's session asks (``hasAttestationCA``).
    public func attestationCA() throws(SessionError) -> AttestationCA {
        do { return try account.attestationCA() } catch { throw SessionError(error) }
    }

    /// What `getClientCapabilities()` gives a page on `device`.
    public func capabilities(device: String? = nil) throws(SessionError) -> ClientCapabilities {
        do { return try account.device(device).capabilities() } catch { throw SessionError(error) }
    }

    // MARK: - Devices

    /// Adds a device; with a PIN, `approver` (an enrolled device; default ``defaultApprover(for:)``)
    /// verifies on its own device.
    public func addDevice(_ name: String, pin: SecureBytes?, maxPINAttempts: UInt32 = Device.defaultMaxPINAttempts,
                          approvedBy approver: String? = nil, approverPerson: PersonRequest = PersonRequest(),
                          profile: String? = nil, aaguid: [UInt8]? = nil) throws(SessionError) {
        let approving = pin == nil ? approver : approver ?? defaultApprover(for: name)
        do {
            try account.addDevice(name, pin: pin, maxPINAttempts: maxPINAttempts, approvedBy: approving,
                                  approver: user(approving ?? "", approverPerson), profile: profile, aaguid: aaguid)
        } catch { throw SessionError(error) }
    }

    /// Adds device `name` as the first of a new vault at `path` that syncs with this one through
    /// the account store alone (``Account/addDevice(_:inNewVaultAt:passphrase:kdf:pin:maxPINAttempts:approvedBy:approver:)``).
    public func addDevice(_ name: String, inNewVaultAt path: String, passphrase: SecureBytes, kdf: KDFLevel,
                          pin: SecureBytes?, maxPINAttempts: UInt32 = Device.defaultMaxPINAttempts,
                          approvedBy approver: String? = nil, approverPerson: PersonRequest = PersonRequest()) throws(SessionError) {
        let approving = approver ?? defaultApprover(for: name)
        do {
            try account.addDevice(name, inNewVaultAt: path, passphrase: passphrase, kdf: kdf, pin: pin, maxPINAttempts: maxPINAttempts,
                                  approvedBy: approving, approver: user(approving ?? "", approverPerson))
        } catch { throw SessionError(error) }
    }

    /// Approves the join request of `code` shown by a device on another machine
    /// (``Account/approveJoin(code:approvedBy:approver:)``): returns the joining device's name.
    public func approveJoin(code: String, approvedBy approver: String? = nil,
                            approverPerson: PersonRequest = PersonRequest()) throws(SessionError) -> String {
        let approving = approver ?? defaultApprover(for: "")
        do {
            return try account.approveJoin(code: code, approvedBy: approving, approver: user(approving ?? "", approverPerson))
        } catch { throw SessionError(error) }
    }

    /// The account's devices, the first (the one its vault was made with) first.
    public var deviceNames: [String] { account.deviceNames }

    /// The account's time, in milliseconds since 1970: its virtual clock's, else the real one.
    public var now: UInt64 { account.clock.milliseconds() }

    /// The name of `device` (`nil`: the first), once it is known to be one of the account's.
    public func deviceName(_ device: String?) throws(SessionError) -> String { try name(of: device) }

    /// Whether `device` has a PIN enrolled, and its failure count.
    public func biometry(device: String? = nil) throws(SessionError) -> BiometryStatus {
        do { return try account.device(device).biometry } catch { throw SessionError(error) }
    }

    /// Whether `device` supports passkeys (``DeviceChange/passkeysSupported(_:)``).
    public func passkeysSupported(device: String? = nil) throws(SessionError) -> Bool {
        do { return try account.device(device).passkeysSupported } catch { throw SessionError(error) }
    }

    /// Changes a device's state.
    public func change(_ change: DeviceChange, device name: String) throws(SessionError) {
        do {
            switch change {
            case .offline: try account.setOnline(false, device: name)
            case .online: try account.setOnline(true, device: name)
            case .reset: try account.resetDevice(name)
            case .remove: try account.removeDevice(name)
            case .unlockBiometry: try account.device(name).unlockBiometry()
            case .passkeysSupported(let supported): try account.setPasskeysSupported(supported, device: name)
            }
        } catch { throw SessionError(error) }
    }

    /// A new biometric PIN on `device`: `person` verifies with the current one; a device reset
    /// while it had one recovers with that former PIN when its person knows it; else an enrolled
    /// `approver` (default ``defaultApprover(for:)``) approves. With `reset`, a new biometry key:
    /// the number of passkeys sealed under the old one, deleted.
    @discardableResult
    public func enrollPIN(_ pin: SecureBytes, device name: String, person: PersonRequest = PersonRequest(), reset: Bool = false,
                          approvedBy approver: String? = nil, approverPerson: PersonRequest = PersonRequest()) throws(SessionError) -> Int {
        do {
            let device = try account.device(name)
            var approving = approver
            if approver == nil {
                let ownPIN = device.biometry.enrolled && !reset
                let former = try account.hasFormerPIN(name)
                let recovers = former && !reset && (person.pin != nil || people.knowsPIN(of: name))
                approving = ownPIN || recovers ? nil : defaultApprover(for: name)
            }
            return try device.enrollBiometricPIN(pin, user: user(name, person), reset: reset, approvedBy: approving,
                                                 approver: user(approving ?? "", approverPerson))
        } catch { throw SessionError(error) }
    }

    /// The authenticator a device (`nil`: the account's default) answers as, for the passkeys it makes from now.
    public func setProfile(_ profile: String, aaguid: [UInt8]? = nil, device: String? = nil) throws(SessionError) {
        do { try account.setProfile(profile, aaguid: aaguid, device: device) } catch { throw SessionError(error) }
    }

    // MARK: - Sync

    /// The changes a deletion outranked, as this vault's devices learned of them, oldest first.
    package var droppedRevisions: [DroppedRevision] { account.droppedRevisions }

    /// Sync delays, for the account or one device.
    public func setDelays(upload: DelayRange?, download: DelayRange?, device: String? = nil) throws(SessionError) {
        do { try account.setDelays(upload: upload, download: download, device: device) } catch { throw SessionError(error) }
    }

    /// The account's sync options: the seed of its delays, and whether BS is 1 before an upload lands.
    public func setSyncOptions(seed: UInt64? = nil, backupStateImmediate: Bool? = nil) throws(SessionError) {
        do { try account.setSyncOptions(seed: seed, backupStateImmediate: backupStateImmediate) } catch { throw SessionError(error) }
    }

    /// Forgets this vault's copy of the store and reads the store again from the start.
    public func rebuildFromStore() throws(SessionError) {
        do { try account.forgetStore() } catch { throw SessionError(error) }
    }

    /// What is in flight, per device.
    public func syncStatus() throws(SessionError) -> SyncStatus {
        do { return try account.syncStatus() } catch { throw SessionError(error) }
    }

    // MARK: - Clock

    /// Moves the virtual clock (never back); `usage` on the real one, `badInput` past the end of
    /// the year 9999. The time it shows after.
    @discardableResult
    public func clock(_ request: ClockRequest) throws(SessionError) -> UInt64 {
        guard let clock else { throw SessionError(.usage, "this session runs on the real clock, which only time moves") }
        switch request {
        case .advance(let ms):
            guard ms <= VirtualClock.end - clock.now else { throw SessionError(.badInput, "the clock would pass the end of the year 9999") }
            clock.advance(by: ms)
        case .set(let time):
            guard time <= VirtualClock.end else { throw SessionError(.badInput, "the clock cannot pass the end of the year 9999") }
            guard time >= clock.now else { throw SessionError(.badInput, "the clock does not go back") }
            clock.advance(to: time)
        }
        return clock.now
    }

    private func name(of device: String?) throws(SessionError) -> String {
        do { return try account.device(device).name } catch { throw SessionError(error) }
    }
}
