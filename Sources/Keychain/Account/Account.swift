#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import KeyVault
import SyncStore
import VirtualAuthenticator

/// One synced keychain account: the vault holding its devices (each with its own biometric PIN and
/// replica), and the account store the devices sync through — a directory by default, standing in
/// for the cloud, which holds only what the account key sealed. See docs/sync.md.
///
/// No daemon moves anything: each device's view is computed, whenever it is asked for, from when
/// each change was made and the delays then in force (SyncSchedule). Opening an account uploads
/// every change that has landed by now to the store, so the store always looks as the cloud would.
///
/// The account is the composition of three parts, each owning its own state (docs/design.md, "An
/// account is three parts"): what the devices see (``ReadModel``), the link to the store that
/// syncing writes (``StoreLink``), and the devices (AccountDevices.swift). It holds what they
/// share: the vault, the settings, the clock and the random source.
public final class Account {
    public let path: String
    let vault: Vault
    /// Changed by this vault's `sync set` and by taking up the store's (StoreKnowledge.swift).
    var settings: AccountSettings
    /// The account's time (milliseconds): the live clock, or a scenario's virtual one.
    public var clock: WallClock
    /// Credential ids and revision ids; a scenario's seeded source makes them repeat.
    public var random: RandomSource
    /// The Public Suffix List the client checks RP IDs against.
    public var suffixes: @Sendable () -> PublicSuffixList = { .system }
    /// What the devices see, decoded once and kept: revisions, signing keys, the CA (ReadModel.swift).
    let readModel: ReadModel
    /// The account's link to its store, which only syncing changes (StoreLink.swift).
    let storeLink: StoreLink
    /// The RPs a discoverable sign-in or a list has read passkey by passkey (``NewestFirst``) in
    /// this process: a process that asks again keeps the RP's whole view instead
    /// (ViewCredentialStore.swift).
    var readNewestFirst = Set<String>()
    /// Why the account store is not used, when it cannot be.
    public var storeProblem: String? { storeLink.problem }
    /// What this process found wrong with the store, as it found it (StoreRepairs.swift): each
    /// said once, on stderr by the command line.
    public var storeWarnings: [String] { storeLink.warnings }
    /// Changes made to passkeys that another device had already deleted (``DroppedRevision``), in
    /// the order they were made, for a scenario's timeline.
    package var droppedRevisions: [DroppedRevision] { storeLink.droppedRevisions }
    /// What the first right biometric PIN on each device established, by device id, in memory only
    /// and for as long as this account is open (``BiometricSensor/Memory``; docs/biometry.md, "What
    /// a process keeps").
    var checkedPINs = [[UInt8]: BiometricSensor.Memory]()

    /// Forgets what device `deviceId`'s last right PIN established — its ``checkedPINs`` entry —
    /// and every key the keyring holds opened under a biometry key (a re-enrollment retires what
    /// opened them); with `everyKey`, every kept key (the device is reset or removed, and its
    /// passkeys with it).
    func forgetCheckedPIN(of deviceId: [UInt8], everyKey: Bool = false) {
        checkedPINs[deviceId] = nil
        if everyKey { readModel.keyring.forgetAll() } else { readModel.keyring.forgetVerified() }
    }

    init(vault: Vault, clock: WallClock, random: RandomSource, memoryStore: MemoryStore? = nil) throws(VaultError) {
        self.path = vault.path
        self.vault = vault
        readModel = ReadModel(vault: vault)
        storeLink = StoreLink(positionAtOpen: vault.position, memoryStore: memoryStore)
        self.clock = clock
        self.random = random
        try SyncState.requireKnownFormat(in: vault)  // before anything reads the state or writes
        self.settings = try AccountSettings.read(in: vault)
    }

    var now: UInt64 { clock.milliseconds() }

    /// How many times the vault computed a derived value (the device directory, …) from its
    /// records rather than following a change: a measure, for tests and benchmarks, that an
    /// operation does not decode every device again.
    package var derivations: Int { vault.derivations }

    /// Passkey revisions are read by RP: opening a vault reads its devices and settings and the
    /// vault's index, and a ceremony reads the revisions of its RP (docs/vault-format.md, "Index");
    /// one found by credential id costs the index's lookup bucket of that id and its RP's revisions.
    /// An RP of more than ``splitRecords`` revisions is split by user handle: a passkey found by
    /// credential id, or a user's passkeys, cost that user's shard of the RP, not the RP. The index
    /// keeps each shard's latest place in creation order (``NewestFirst/shardBound(of:)``: creation
    /// instant and item id), so that a discoverable sign-in reads the shards newest first and stops
    /// at its default account.
    static var partitioning: VaultPartitioning {
        VaultPartitioning(kind: .credential, tag: CredentialRecord.Tag.rpId, lookup: CredentialRecord.Tag.credentialId,
                          shard: CredentialRecord.Tag.userHandle, splitRecords: splitRecordsHere ?? splitRecords,
                          bound: { NewestFirst.shardBound(of: $0) })
    }

    /// ``splitRecords`` for the vaults opened within one task (a test splitting a small RP).
    @TaskLocal package static var splitRecordsHere: Int?

    /// Revisions above which an RP's partition is split: 1,024, or `$AUTHCTL_INDEX_SPLIT_RECORDS`
    /// (1 … 1,000,000; a tuning, which tests set low to split small RPs). Not part of the format:
    /// a vault split under one value is read under any other.
    static let splitRecords: Int = {
        guard let raw = getenv("AUTHCTL_INDEX_SPLIT_RECORDS"), let value = Int(String(cString: raw)), (1...1_000_000).contains(value) else { return 1024 }
        return value
    }()

    /// The id of a new passkey revision, from the account's random source: a scenario's seeded one
    /// makes ids, and the delays drawn for them, repeat. The id a registration reserved and did not
    /// write (it failed) comes first, so only what is written draws from the stream.
    func newRevisionId() -> [UInt8] {
        defer { reservedRevisionId = nil }
        return reservedRevisionId ?? random.bytes(16)
    }

    /// The id the next revision written will have, drawn now for a registration that must know it
    /// before its ceremony (the BS flag it signs depends on when that revision lands), and kept
    /// for the next write when the ceremony fails, which writes nothing: a failed step moves no
    /// later id or delay of a seeded run.
    func reserveRevisionId() -> [UInt8] {
        if let reservedRevisionId { return reservedRevisionId }
        let id = random.bytes(16)
        reservedRevisionId = id
        return id
    }

    private var reservedRevisionId: [UInt8]?

    // MARK: - Create and open

    /// OpenSSL must be usable before anything signs, hashes or draws a random number (see
    /// ``CryptoAvailability``): `unknown` otherwise, not a stop on a precondition.
    static func requireCrypto() throws(DeviceError) {
        do { try CryptoAvailability.check() } catch {
            throw DeviceError(.authenticator(.unknown), "OpenSSL cannot be used (is OPENSSL_CONF pointing at a configuration without its default provider?): \(error)")
        }
    }

    /// Creates a vault at `path` with one account and its first device, `deviceName`; with
    /// `biometricPIN`, that device's simulated biometric is enrolled.
    public static func create(at path: String, passphrase: SecureBytes, kdf: KDFLevel = .interactive,
                              deviceName: String = Device.defaultDeviceName, biometricPIN: SecureBytes?,
                              maxPINAttempts: UInt32 = Device.defaultMaxPINAttempts,
                              waiting: Vault.Waiting = Vault.Waiting(),
                              clock: WallClock = .live, random: RandomSource = .live) throws(DeviceError) -> Account {
        try create(at: path, passphrase: passphrase, kdf: kdf, deviceName: deviceName, biometricPIN: biometricPIN,
                   maxPINAttempts: maxPINAttempts, waiting: waiting, clock: clock, random: random, durability: .full)
    }

    /// ``create(at:passphrase:kdf:deviceName:biometricPIN:maxPINAttempts:waiting:clock:random:)`` with
    /// the vault's (and its store's) durability and the vault's sharing: `.none` and `.held` only
    /// for a throw-away account its caller deletes when done, as a scenario's is (docs/scenarios.md).
    /// Every account ``open(at:passphrase:access:waiting:clock:random:)`` opens is durable and shared.
    /// `storeInMemory`: the account's devices sync through a ``MemoryStore`` rather than a
    /// directory — for such a throw-away account only, which no other process opens.
    /// `attestationCA`: the CA the account's attestations chain to — one made for the account when
    /// `nil`; one shared by the accounts a server makes, as one manufacturer's CA signs for many
    /// devices.
    package static func create(at path: String, passphrase: SecureBytes, kdf: KDFLevel = .interactive,
                               deviceName: String = Device.defaultDeviceName, biometricPIN: SecureBytes?,
                               maxPINAttempts: UInt32 = Device.defaultMaxPINAttempts,
                               waiting: Vault.Waiting = Vault.Waiting(),
                               clock: WallClock = .live, random: RandomSource = .live,
                               durability: Vault.Durability, sharing: Vault.Sharing = .shared,
                               storeInMemory: Bool = false, attestationCA: AttestationCA? = nil,
                               storePath: String? = nil) throws(DeviceError) -> Account {
        try requireCrypto()
        guard passphrase.count > 0 else { throw DeviceError(.invalidArgument, "the vault passphrase is empty") }
        try checkDeviceName(deviceName)
        if let biometricPIN { try Device.checkNewPIN(biometricPIN) }
        guard (1...100).contains(maxPINAttempts) else {
            throw DeviceError(.invalidArgument, "the number of PIN attempts before lockout must be from 1 to 100")
        }
        do {
            // The settings record (the account and its first device) is part of creation: there is
            // never a vault without one.
            let vault = try Vault.create(at: path, passphrase: passphrase, kdf: kdf, waiting: waiting,
                                         partitioning: Account.partitioning, durability: durability,
                                         sharing: sharing) { vault throws(VaultError) in
                let enrollment = try biometricPIN.map { pin throws(VaultError) in try vault.enrollBiometry(pin: pin).0 }
                var settings = DeviceRecord.newRecord(kind: .settings, name: deviceName, enrollment: enrollment,
                                                      maxAttempts: maxPINAttempts, syncedFrom: Instant(ms: clock.milliseconds(), order: 0))
                try AccountSettings.initialize(&settings, in: vault, ca: attestationCA)
                if let storePath { settings.setField(AccountSettings.Tag.storePath, Array(storePath.utf8)) }
                return [settings]
            }
            let account = try Account(vault: vault, clock: clock, random: random, memoryStore: storeInMemory ? MemoryStore() : nil)
            account.readModel.cachedCA = attestationCA
            if storePath != nil { try account.sync() }  // the store knows the account and its first device from the start
            return account
        } catch { throw DeviceError(error, path: path) }
    }

    /// Opens the vault at `path`: `.write` for ceremonies and changes (writers take turns), `.read`
    /// to look. A writer uploads to the store the changes that have landed by now; a reader only
    /// reads it. ``storeProblem`` says when the store could not be used.
    public static func open(at path: String, passphrase: SecureBytes, access: Vault.Access = .write,
                            waiting: Vault.Waiting = Vault.Waiting(),
                            clock: WallClock = .live, random: RandomSource = .live) throws(DeviceError) -> Account {
        try open(at: path, passphrase: passphrase, access: access, waiting: waiting, clock: clock, random: random,
                 verifyingFirst: false)
    }

    /// A writer's ``open(at:passphrase:access:waiting:clock:random:)`` for an operation that reads
    /// the whole vault before it changes it (`vault compact`, `vault passwd`, `sync rebuild`):
    /// every record and every frame of the log is read and authenticated first, before the sync
    /// that opening does writes to the store or the vault. Opening alone reads only the index's
    /// root and the log after it, so without this a frame damaged in the part the index covers
    /// would be found by the operation only after that sync had written — and a command that fails
    /// must leave the vault and its store as they were.
    package static func openVerified(at path: String, passphrase: SecureBytes, waiting: Vault.Waiting = Vault.Waiting(),
                                     clock: WallClock = .live, random: RandomSource = .live) throws(DeviceError) -> Account {
        try open(at: path, passphrase: passphrase, access: .write, waiting: waiting, clock: clock, random: random,
                 verifyingFirst: true)
    }

    private static func open(at path: String, passphrase: SecureBytes, access: Vault.Access, waiting: Vault.Waiting,
                             clock: WallClock, random: RandomSource, verifyingFirst: Bool) throws(DeviceError) -> Account {
        try requireCrypto()
        do {
            let vault = try Vault.open(at: path, passphrase: passphrase, access: access, waiting: waiting,
                                       partitioning: Account.partitioning)
            if verifyingFirst { try vault.verify() }
            let account = try Account(vault: vault, clock: clock, random: random)
            try account.sync()
            if account.storeOnServer || DirectoryStore.exists(at: account.storePath) { account.useStore() }  // a reader reads it too
            account.storeLink.reads.readAtOpen(writes: account.storeWritesHere)  // what the command that opened it does next reads no more
            return account
        } catch { throw DeviceError(error, path: path) }
    }

    // MARK: - Authenticator profiles

    /// The account's attestation CA, whose root an RP trusts to accept the certificates in
    /// `packed`, `tpm`, `android-key`, `apple` and `fido-u2f` statements. Made when the vault is
    /// created (for a vault from before, the first time a writer needs it); its keys are sealed
    /// in the settings record.
    public var hasAttestationCA: Bool {
        readModel.cachedCA != nil || ((try? deviceRecords()[0].record.field(AccountSettings.Tag.attestationCA)) ?? nil) != nil
    }

    public func attestationCA() throws(DeviceError) -> AttestationCA {
        if let cachedCA = readModel.cachedCA { return cachedCA }
        let first = try deviceRecords()[0].record
        if let sealed = first.field(AccountSettings.Tag.attestationCA) {
            let bytes: SecureBytes
            do { bytes = try vault.openSecret(Array(sealed), recordId: first.id) } catch { throw DeviceError(error) }
            let ca: AttestationCA
            do { ca = try AttestationCA(serialized: bytes.withUnsafeBytes { Array($0) }) } catch {
                // Bytes the vault authenticated that are no CA: data on disk, written or edited wrong.
                throw DeviceError(.vaultCorrupted, "the vault's attestation CA cannot be read: \(error)")
            }
            readModel.cachedCA = ca
            return ca
        }
        guard vault.access == .write else {
            throw DeviceError(.invalidArgument, "this vault has no attestation CA yet; a command that writes (a registration) makes it")
        }
        do {
            try DeviceRecord.update(first.id, in: vault) { r throws(VaultError) in
                r.setField(AccountSettings.Tag.attestationCA, try AccountSettings.sealedNewCA(in: vault, recordId: r.id))
            }
        } catch { throw DeviceError(error) }
        return try attestationCA()
    }

    /// The authenticator model device `name` answers as (every device when `nil`, which also sets
    /// the account's default, the first device's): a profile by name, and an AAGUID replacing the
    /// profile's. Passkeys already made keep what they were made with.
    public func setProfile(_ profileName: String, aaguid: [UInt8]? = nil, device name: String? = nil) throws(DeviceError) {
        guard AuthenticatorProfile.named(profileName) != nil else {
            throw DeviceError(.invalidArgument, "no profile named '\(EchoedInput.text(profileName))' (see authctl profiles)")
        }
        guard aaguid == nil || aaguid!.count == 16 else { throw DeviceError(.invalidArgument, "an AAGUID is 16 bytes") }
        let targets = name == nil ? try deviceRecords() : [try deviceRecord(named: name)]
        do {
            for target in targets {
                try DeviceRecord.update(target.id, in: vault) { r throws(VaultError) in DeviceRecord.setProfile(profileName, aaguid: aaguid, in: &r) }
            }
        } catch { throw DeviceError(error) }
    }

    /// The profile device `record` answers as, and its AAGUID: its own setting, else the account's
    /// default (the first device's), else ``AuthenticatorProfile/default``.
    func profile(of record: DeviceRecord) throws(DeviceError) -> (AuthenticatorProfile, aaguid: [UInt8]) {
        let first = try deviceRecords()[0]
        let source = record.profileName != nil ? record : first
        guard let name = source.profileName else { return (.default, AuthenticatorProfile.default.aaguid) }
        guard let profile = AuthenticatorProfile.named(name) else {
            throw DeviceError(.invalidArgument, "device '\(record.name)' uses profile '\(name)', which this version does not know")
        }
        return (profile, source.aaguid ?? profile.aaguid)
    }

    // MARK: - Sync settings

    /// Sets the account's delays, or one device's when `device` is named (`nil` ranges are left as
    /// they are), from now on: what is in flight keeps the delay it started with.
    public func setDelays(upload: DelayRange?, download: DelayRange?, device name: String? = nil) throws(DeviceError) {
        let target = name == nil ? try deviceRecords()[0] : try deviceRecord(named: name)
        do {
            try sync()
            useStore()
            let time = eventTime
            try DeviceRecord.update(target.id, in: vault) { r throws(VaultError) in
                let device = try DeviceRecord(r)
                let (up, down) = name == nil
                    ? (AccountSettings.Tag.uploadDelay, AccountSettings.Tag.downloadDelay)
                    : (DeviceRecord.Tag.uploadDelay, DeviceRecord.Tag.downloadDelay)
                var (ups, downs) = name == nil ? (settings.uploadDelay, settings.downloadDelay) : (device.uploadDelay, device.downloadDelay)
                if let upload { ups.set(upload, from: time) }
                if let download { downs.set(download, from: time) }
                DeviceRecord.setHistory(ups, up, in: &r)
                DeviceRecord.setHistory(downs, down, in: &r)
            }
            settings = try AccountSettings.read(in: vault)
            // The account's delays travel to every vault through the store; a device's own stay here.
            if name == nil {
                try publishSettings { published in
                    if let upload { published.uploadDelay = upload }
                    if let download { published.downloadDelay = download }
                }
            }
        } catch { throw DeviceError(error) }
    }

    /// The seed delays in a range are drawn with (from now on: what is in flight keeps its draw),
    /// and whether BS is reported from a passkey's creation (`immediate`, as Apple does) rather
    /// than once its first upload landed.
    public func setSyncOptions(seed: UInt64? = nil, backupStateImmediate: Bool? = nil) throws(DeviceError) {
        let first = try deviceRecords()[0].id
        do {
            try sync()
            let time = eventTime
            try DeviceRecord.update(first, in: vault) { r throws(VaultError) in
                if let seed {
                    var seeds = settings.seed
                    seeds.set(Seed(seed), from: time)
                    DeviceRecord.setHistory(seeds, AccountSettings.Tag.seed, in: &r)
                }
                if let backupStateImmediate { r.setField(AccountSettings.Tag.backupStateImmediate, [backupStateImmediate ? 1 : 0]) }
            }
            settings = try AccountSettings.read(in: vault)
            try publishSettings { published in
                if let seed { published.seed = seed }
                if let backupStateImmediate { published.backupStateImmediate = backupStateImmediate }
            }
        } catch { throw DeviceError(error) }
    }

    public var seed: UInt64 { settings.seed.current?.value ?? 0 }
    public var backupStateImmediate: Bool { settings.backupStateImmediate }

    // MARK: - The vault itself

    /// Counting the records reads every passkey.
    package var facts: Vault.Facts {
        get throws(DeviceError) {
            do { return try vault.facts } catch { throw DeviceError(error) }
        }
    }

    public func compact() throws(DeviceError) {
        do { try vault.compact() } catch { throw DeviceError(error) }
    }

    /// A new passphrase (and KDF level, when given) and a new vault key: every record is written
    /// again under the new key, so an old copy of the header with the old passphrase opens nothing.
    public func changePassphrase(to passphrase: SecureBytes, kdf: KDFLevel? = nil) throws(DeviceError) {
        guard passphrase.count > 0 else { throw DeviceError(.invalidArgument, "the new passphrase is empty") }
        do {
            // Every field the record tables mark sealed (RecordTags.swift), so none added later is missed.
            try vault.changePassphrase(to: passphrase, kdf: kdf, sealedFields: RecordTags.sealedFields())
            settings = try AccountSettings.read(in: vault)
        } catch { throw DeviceError(error) }
    }
}
