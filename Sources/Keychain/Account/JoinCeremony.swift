#if canImport(Glibc)
import Glibc
#endif
@_spi(ByteOrder) import ByteOrder
import KeyVault
import SyncStore
import VirtualAuthenticator

/// A device on another machine joining an account through its store (docs/sync.md, "Joining
/// from another machine"): it shows a one-time code, an enrolled device approves the code with
/// its PIN, and the account's keys come back sealed for the joining device alone.
///
/// In the store (metadata `join-<lookup>`, the lookup derived from the code, never the code):
///
///     request  "AJQ2" ‖ expiry (8) ‖ XChaCha20-Poly1305(code key, AD "AUTHCTL-JOIN-REQUEST" ‖ expiry) of
///              public key (32) ‖ device name
///     reply    "AJA2" ‖ expiry (8) ‖ crypto_box_seal(public key) of
///              XChaCha20-Poly1305(code key, AD "AUTHCTL-JOIN-REPLY" ‖ public key) of the keys (``JoinedKeys``)
///     refusal  "AJX2" ‖ expiry (8) ‖ XChaCha20-Poly1305(code key, AD "AUTHCTL-JOIN-REFUSAL" ‖ public key) of a reason
///     cleared  empty: read by the joining device, withdrawn, or stale (``JoinCode/sweep(_:now:adding:)``)
///
/// The expiry is when the joining device stops waiting (milliseconds since the Unix epoch,
/// big-endian, by its clock): an approval after it is refused before the PIN is asked for, and
/// whatever is left under the lookup is emptied a minute after it.
///
/// The lookup and the code key both come from Argon2id of the code (60 random bits;
/// ``JoinCode/keys(_:)``), so only someone who holds the code — the person who read it off the
/// joining device — can make a request the approver opens or an answer the joining device opens,
/// and whoever holds the store pays an Argon2id for every guess at the code: it can neither read
/// the keys (sealed to the joining device's key pair, kept in its memory) nor put in a key pair
/// or an account of its own. The recovery secret is the other way in (``RecoveryEnvelope``).
public final class JoinRequest {
    /// What the person reads off this device and types into the approving one: 12 characters of
    /// Crockford's base32 in groups of four.
    public let code: String
    public let deviceName: String
    /// When this device stops waiting for an approval (milliseconds since the Unix epoch).
    public let expiry: UInt64
    let store: any AccountStore
    let storePath: String
    let keyPair: SealedBoxKeyPair
    let codeKey: SealingKey
    let lookup: String
    let clock: WallClock
    private var version: UInt64 = 0

    /// Posts a request to join the account at `storePath` as device `deviceName`, waiting for an
    /// approval for up to `timeout` from now (the request's expiry). The account must exist in
    /// the store. Stale join entries in the store are emptied on the way.
    public init(storePath: String, deviceName: String, timeout: Duration, clock: WallClock = .live,
                random: RandomSource = .live) throws(DeviceError) {
        try Account.checkDeviceName(deviceName)
        self.storePath = storePath
        self.deviceName = deviceName
        self.clock = clock
        store = try Self.openStore(storePath)
        code = JoinCode.make(random)
        keyPair = SealedBoxKeyPair()
        let (lookupBytes, key) = try JoinCode.keys(code)
        (lookup, codeKey) = (JoinCode.lookupKey(lookupBytes), key)
        let now = clock.milliseconds()
        let wait = UInt64(min(max(0, timeout.components.seconds), Int64(WallClock.latest / 1000))) * 1000
            + UInt64(max(0, timeout.components.attoseconds / 1_000_000_000_000_000))
        expiry = min(WallClock.latest, now + wait)
        let stamp = BigEndianBytes.of(expiry)
        let body = keyPair.publicKey + Array(deviceName.utf8)
        let request = JoinCode.framed(JoinCode.requestMagic, expiry: expiry, codeKey.seal(body, associatedData: JoinCode.requestAD + stamp))
        JoinCode.sweep(store, now: now, adding: (lookupBytes, expiry))
        do { version = try store.setMetadata(lookup, request, expecting: 0) } catch { throw DeviceError(error) }
    }

    /// Opens the store a joining device names: it must exist (a joining device creates nothing).
    static func openStore(_ path: String) throws(DeviceError) -> any AccountStore {
        do throws(StoreError) {
            if PostgresAddress.names(path) { return try PostgresStore(address: PostgresAddress(path), create: false) }
            guard path.hasPrefix("/") else { throw StoreError(.invalid, "a store directory is given from the root ('\(path)' is relative)") }
            return try DirectoryStore(path: path, create: false)
        } catch { throw DeviceError(error) }
    }

    /// Waits until the request's expiry for an enrolled device's answer: the account's keys when
    /// it approved (the request is then cleared from the store); `canceled` with the approver's
    /// reason when it refused; a `timedOut` error when no answer came. `stop` is asked about once a second at most:
    /// when it says so, the request is withdrawn and the wait ends as `canceled` (a person's Ctrl-C).
    public func waitForApproval(stop: () -> Bool = { false }) throws(DeviceError) -> JoinedKeys {
        let deadline = expiry
        while true {
            let entry: StoreMetadata?
            do { entry = try store.metadata([lookup])[lookup] } catch {
                // A server restarting or a connection lost while waiting: wait on, reconnecting.
                guard case .unavailable = error.kind, clock.milliseconds() < deadline else { throw DeviceError(error) }
                pause(.milliseconds(500))
                continue
            }
            guard let entry, entry.version == version || !entry.bytes.isEmpty else {
                // Only the store (or a device whose clock runs minutes ahead, taking it for stale) does this.
                throw DeviceError(.storage, "join request \(code) left the store before it was answered")
            }
            if entry.version > version {
                let answer = try read(entry.bytes)
                do { try store.setMetadata(lookup, [], expecting: entry.version) } catch {}  // cleared: best effort
                return answer
            }
            if stop() {
                do { try store.setMetadata(lookup, [], expecting: version) } catch {
                    if case .conflict = error.kind { continue }  // answered meanwhile: read it
                }
                throw DeviceError(.authenticator(.canceled), "the join was canceled; request \(code) is withdrawn")
            }
            let now = clock.milliseconds()
            guard now < deadline else {
                // Withdrawn — unless answered meanwhile, when the answer is read after all.
                do { try store.setMetadata(lookup, [], expecting: version) } catch {
                    if case .conflict = error.kind { continue }
                }
                throw DeviceError(.authenticator(.timedOut), "no enrolled device approved code \(code) in time")
            }
            let wait = Duration.milliseconds(Int64(min(deadline - now, 1000)))
            if let server = store as? PostgresStore {
                do { _ = try server.waitForChange(timeout: wait) } catch { pause(.milliseconds(500)) }  // read again, above
            } else {
                pause(min(wait, .milliseconds(200)))  // a directory store has nothing to wait on: it is polled
            }
        }
    }

    private func pause(_ duration: Duration) {
        var time = timespec(tv_sec: Int(duration.components.seconds), tv_nsec: Int(duration.components.attoseconds / 1_000_000_000))
        _ = nanosleep(&time, nil)
    }

    /// The answer in the store: the keys, or the approver's refusal (`canceled`). One that does not
    /// open under the code — a refusal included — was not made by a device that read the code:
    /// the store's doing (`ioError`), and nothing the person here could have answered otherwise.
    func read(_ bytes: [UInt8]) throws(DeviceError) -> JoinedKeys {
        let ad = keyPair.publicKey
        let notOpening = DeviceError(.storage, "the answer to join request \(code) in the store does not open: it was not made with this code, or was altered")
        guard let (magic, _, rest) = JoinCode.framing(bytes) else { throw notOpening }
        if magic == JoinCode.refusalMagic {
            guard let reason = codeKey.open(rest, associatedData: JoinCode.refusalAD + ad) else { throw notOpening }
            throw DeviceError(.authenticator(.canceled), "the join was refused: \(String(decoding: reason, as: UTF8.self))")
        }
        guard magic == JoinCode.replyMagic, let boxed = keyPair.open(rest),
              let inner = boxed.withUnsafeBytes({ codeKey.openSecret(Array($0), associatedData: JoinCode.replyAD + ad) }),
              let keys = JoinedKeys(inner)
        else { throw notOpening }
        return keys
    }
}

/// What a joining device receives: the account's key and id, the account's biometry key (when
/// the approver's device has one), and who approved.
public struct JoinedKeys {
    let accountKey: SealingKey
    let accountId: [UInt8]
    let biometryKey: SecureBytes?

    /// version 1 ‖ account key (32) ‖ account id (16) ‖ 0 or 1 ‖ biometry key (32, when 1)
    init(accountKey: SealingKey, accountId: [UInt8], biometryKey: SecureBytes?) {
        self.accountKey = accountKey
        self.accountId = accountId
        self.biometryKey = biometryKey
    }

    init?(_ secure: SecureBytes) {
        guard let parsed = secure.withUnsafeBytes({ raw -> JoinedKeys? in
            guard raw.count == 50 || raw.count == 82, raw[0] == 1, raw[49] == (raw.count == 82 ? 1 : 0),
                  let key = SealingKey(copying: UnsafeRawBufferPointer(rebasing: raw[1..<33]))
            else { return nil }
            let bio = raw.count == 82 ? SecureBytes(copying: UnsafeRawBufferPointer(rebasing: raw[50..<82])) : nil
            return JoinedKeys(accountKey: key, accountId: Array(raw[33..<49]), biometryKey: bio)
        }) else { return nil }
        self = parsed
    }

    var sealed: SecureBytes {
        let out = SecureBytes(count: biometryKey == nil ? 50 : 82)
        out.withUnsafeMutableBytes { o in
            o[0] = 1
            accountKey.withRawBytes { k in for i in 0..<32 { o[1 + i] = k[i] } }
            for i in 0..<16 { o[33 + i] = accountId[i] }
            o[49] = biometryKey == nil ? 0 : 1
            biometryKey?.withUnsafeBytes { b in for i in 0..<32 { o[50 + i] = b[i] } }
        }
        return out
    }
}

extension Account {
    /// Approves the join request of `code` (shown by a device on another machine): the user is
    /// verified on an enrolled device of this vault (`approvedBy`, default the first enrolled) and
    /// the account's keys go to the joining device, sealed for it. Returns the joining device's
    /// name. A code no request has is `invalidArgument`; a request past its expiry is `timedOut`,
    /// before the user is asked; a name a device of the account has is refused (and the joining
    /// device told so).
    public func approveJoin(code text: String, approvedBy approverName: String? = nil,
                            approver: UserPolicy = UserPolicy()) throws(DeviceError) -> String {
        let code = try JoinCode.normalized(text)
        guard vault.access == .write else {
            // Every front end opens the vault to write before it approves: a bug, not the caller's input.
            throw DeviceError(.authenticator(.unknown), "approving a device needs the vault opened for writing")
        }
        useStore()
        guard let state = storeLink.state else {
            throw DeviceError(.storage, storeProblem ?? "the account store at \(storeName) cannot be used")
        }
        let (lookupBytes, codeKey) = try JoinCode.keys(code)
        let lookup = JoinCode.lookupKey(lookupBytes)
        let entry: StoreMetadata?
        do { entry = try state.store.metadata([lookup])[lookup] } catch { throw DeviceError(error) }
        // Whatever this approval comes to, the join entries gone stale are emptied after it.
        defer { JoinCode.sweep(state.store, now: now) }
        guard let entry, let (magic, expiry, sealed) = JoinCode.framing(entry.bytes), magic == JoinCode.requestMagic,
              let body = codeKey.open(sealed, associatedData: JoinCode.requestAD + BigEndianBytes.of(expiry)),
              body.count > SealedBoxKeyPair.publicKeyBytes
        else { throw DeviceError(.invalidArgument, "no device is waiting to join with code \(code) (mistyped, answered, withdrawn, or past its expiry long enough to be emptied)") }
        // A joining device that stopped waiting (killed, say, so it could not withdraw) reads no
        // answer: refused before the approver's PIN is asked for.
        guard now <= expiry else {
            throw DeviceError(.authenticator(.timedOut), "join request \(code) expired \((now - expiry) / 1000) s ago: the joining device "
                              + "no longer waits for an answer; join again (init --join) for a new code")
        }
        let publicKey = Array(body.prefix(SealedBoxKeyPair.publicKeyBytes))
        let name = String(decoding: body.dropFirst(SealedBoxKeyPair.publicKeyBytes), as: UTF8.self)
        func answer(_ bytes: [UInt8]) throws(DeviceError) {
            do { try state.store.setMetadata(lookup, bytes, expecting: entry.version) } catch {
                if case .conflict = error.kind { throw DeviceError(.invalidArgument, "join request \(code) was answered or withdrawn meanwhile") }
                throw DeviceError(error)
            }
        }
        do throws(DeviceError) {
            try Self.checkDeviceName(name)
            try requireFreeName(name)
        } catch {
            try answer(JoinCode.framed(JoinCode.refusalMagic, expiry: expiry,
                                       codeKey.seal(Array(error.message.utf8), associatedData: JoinCode.refusalAD + publicKey)))
            throw error
        }
        let biometryKey = try approvingBiometryKey(for: name, approvedBy: approverName, approver: approver)
        // The account's settings as they are now, for the new vault to take up at its first sync.
        do {
            let mine = PublishedSettings(settings, at: present)
            try publishSettings { $0 = mine }
        } catch { throw DeviceError(error) }
        let keys = JoinedKeys(accountKey: settings.accountKey, accountId: settings.accountId, biometryKey: biometryKey)
        var innerCopy = codeKey.sealSecret(keys.sealed, associatedData: JoinCode.replyAD + publicKey)
        guard let boxed = SealedBoxKeyPair.seal(SecureBytes(consuming: &innerCopy), to: publicKey) else {
            throw DeviceError(.invalidArgument, "join request \(code) carries no usable key")
        }
        try answer(JoinCode.framed(JoinCode.replyMagic, expiry: expiry, boxed))
        return name
    }

    /// The account's biometry key, unlocked on an enrolled device of this vault by the user's PIN
    /// (`nil` when no device here has one: the joining device gets a biometry key of its own).
    func approvingBiometryKey(for name: String, approvedBy approverName: String?, approver: UserPolicy) throws(DeviceError) -> SecureBytes? {
        let enrolled = try deviceRecords().filter { $0.enrollment != nil }
        guard !enrolled.isEmpty else { return nil }
        let approving = try deviceRecord(named: approverName ?? defaultApprover(for: name) ?? enrolled[0].name)
        guard approving.enrollment != nil else {
            throw DeviceError(.invalidArgument, "device '\(approving.name)' has no biometric PIN to approve '\(name)' with")
        }
        let prompt = UserPrompt(ceremony: .registration, rpId: "approve device \(name) on \(approving.name)", userName: nil)
        do {
            return try SimulatedUser(sensor: BiometricSensor(account: self, deviceId: approving.id), policy: approver)
                .verifyUser(prompt).biometryKey
        } catch { throw DeviceError(error) }
    }

    /// What joining would refuse only after the approval — a vault where the new one goes, a
    /// directory that is not empty, a PIN too short — checked before a request is posted, so no
    /// approval (and no approver's PIN) is spent on a join that cannot finish.
    public static func checkNewVault(at path: String, pin: SecureBytes?) throws(DeviceError) {
        if let pin { try Device.checkNewPIN(pin) }
        if Device.exists(at: path) { throw DeviceError(.vaultExists, "a vault exists at \(EchoedInput.path(path))") }
        var info = stat()
        guard lstat(path, &info) == 0 else { return }  // absent: made by the join
        guard (info.st_mode & S_IFMT) == S_IFDIR, let dir = opendir(path) else {
            throw DeviceError(.invalidArgument, "\(EchoedInput.path(path)) is not a directory; choose a new one for the vault")
        }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." {
                throw DeviceError(.invalidArgument, "\(EchoedInput.path(path)) is not empty; choose a new directory for the vault")
            }
        }
    }

    /// Makes the vault of a device that joined the account at `storePath` from another machine:
    /// its first device is `name`, its biometric (with `pin`) wraps the account's biometry key when
    /// the keys carry one, and it learns the account's passkeys, devices and settings from the
    /// store alone.
    public static func join(at path: String, passphrase: SecureBytes, kdf: KDFLevel = .interactive, storePath: String,
                            name: String, keys: JoinedKeys, pin: SecureBytes?, maxPINAttempts: UInt32 = Device.defaultMaxPINAttempts,
                            clock: WallClock = .live, random: RandomSource = .live) throws(DeviceError) -> Account {
        try requireCrypto()
        try checkDeviceName(name)
        guard passphrase.count > 0 else { throw DeviceError(.invalidArgument, "the vault passphrase is empty") }
        if let pin { try Device.checkNewPIN(pin) }
        // Its first sync must reach the store — publish the device, read the account — or the
        // device would be joined in name only: the vault is taken back (once this process has let
        // go of it) and the join fails.
        var problem: String?
        do {
            let account = try createMember(at: path, passphrase: passphrase, kdf: kdf, name: name, pin: pin, biometryKey: keys.biometryKey,
                                           maxPINAttempts: maxPINAttempts, accountKey: keys.accountKey, accountId: keys.accountId,
                                           storePath: storePath, syncFields: [], clock: clock, random: random)
            if account.storeLink.state != nil { return account }
            problem = account.storeProblem ?? "the account store at \(account.storeName) could not be used"
        }
        try? Device.removeVault(at: path)
        throw DeviceError(.storage, (problem ?? "") + "; the device did not join (no vault was made)")
    }

    /// A new vault at `path` whose first device `name` belongs to the account of `accountKey` and
    /// `accountId`, syncing through `storePath`: what ``addDevice(_:inNewVaultAt:passphrase:kdf:pin:maxPINAttempts:approvedBy:approver:)``
    /// and ``join(at:passphrase:kdf:storePath:name:keys:pin:maxPINAttempts:clock:random:)`` share.
    static func createMember(at path: String, passphrase: SecureBytes, kdf: KDFLevel, name: String, pin: SecureBytes?,
                             biometryKey: SecureBytes?, maxPINAttempts: UInt32, accountKey: SealingKey, accountId: [UInt8],
                             storePath: String, syncFields: [(UInt8, [UInt8]?)], clock: WallClock,
                             random: RandomSource) throws(DeviceError) -> Account {
        let created = clock.milliseconds()
        do {
            let joined = try Vault.create(at: path, passphrase: passphrase, kdf: kdf, partitioning: Account.partitioning) { vault throws(VaultError) in
                let enrollment = try pin.map { pin throws(VaultError) in try vault.enrollBiometry(pin: pin, keeping: biometryKey).0 }
                var record = DeviceRecord.newRecord(kind: .settings, name: name, enrollment: enrollment, maxAttempts: maxPINAttempts,
                                                    syncedFrom: Instant(ms: created, order: 0))
                record.setField(AccountSettings.Tag.accountKey, vault.sealSecret(accountKey, recordId: record.id))
                record.setField(AccountSettings.Tag.accountId, accountId)
                record.setField(AccountSettings.Tag.storePath, Array(storePath.utf8))
                record.setField(AccountSettings.Tag.attestationCA, try AccountSettings.sealedNewCA(in: vault, recordId: record.id))
                for (tag, value) in syncFields { record.setField(tag, value) }
                return [record]
            }
            let newAccount = try Account(vault: joined, clock: clock, random: random)
            try newAccount.sync()  // publishes its device in the store's directory: every vault knows it from now
            return newAccount
        } catch { throw DeviceError(error, path: path) }
    }
}
