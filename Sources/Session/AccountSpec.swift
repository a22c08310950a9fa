import Keychain
import VirtualAuthenticator

/// A new account as every front end describes it — `authctl init`, `POST /accounts`, a
/// scenario's first `device add`: where its vault lives and how it is kept, its devices (the first
/// makes the account; each after it with a PIN is approved as a new phone is, on the device
/// ``Session/defaultApprover(for:)`` names), its profile, its clock and randomness, and the store
/// it shares with other machines. ``Session/create(_:people:)`` makes it.
public struct AccountSpec {
    /// One of the account's devices.
    public struct DeviceSpec {
        public var name: String
        public var pin: SecureBytes?
        public var maxPINAttempts: UInt32
        /// The profile it answers as (docs/profiles.md), and an AAGUID in place of the profile's.
        public var profile: String?
        public var aaguid: [UInt8]?

        public init(name: String = Device.defaultDeviceName, pin: SecureBytes?, maxPINAttempts: UInt32 = Device.defaultMaxPINAttempts,
                    profile: String? = nil, aaguid: [UInt8]? = nil) {
            self.name = name
            self.pin = pin
            self.maxPINAttempts = maxPINAttempts
            self.profile = profile
            self.aaguid = aaguid
        }
    }

    /// How the vault is kept.
    public enum Keeping: Sendable, Equatable {
        /// Flushed at every commit, opened by any process that knows the passphrase (a user's vault).
        case durable
        /// Flushed at every commit, held by this process alone while it runs (a server's account
        /// kept as a vault).
        case held
        /// A throw-away vault held by this process alone, never flushed, which its caller deletes
        /// when done; its devices sync through the directory store beside it, or through a store
        /// in memory (`storeInMemory`).
        case throwAway(storeInMemory: Bool)
    }

    /// A store on a server or in a directory, shared from the start with other machines' devices,
    /// which join with `recoverySecret` (``RecoverySecret``) or an enrolled device's approval.
    public struct SharedStore: Sendable {
        public var address: String
        public var recoverySecret: String
        /// Shows the recovery secret to the person once the store is claimed for the account and
        /// before anything is made: a store that cannot be used never has a secret shown for it,
        /// and a secret that cannot be shown leaves no account behind.
        public var show: (@Sendable (String) throws(SessionError) -> Void)?

        public init(address: String, recoverySecret: String = RecoverySecret.make(),
                    show: (@Sendable (String) throws(SessionError) -> Void)? = nil) {
            self.address = address
            self.recoverySecret = recoverySecret
            self.show = show
        }
    }

    public var path: String
    public var passphrase: SecureBytes
    public var kdf: KDFLevel
    /// At least one: the first makes the account.
    public var devices: [DeviceSpec]
    /// The profile the account's devices answer as unless their own says otherwise, and its AAGUID.
    public var profile: String?
    public var aaguid: [UInt8]?
    public var keeping: Keeping
    public var store: SharedStore?
    /// The virtual clock the account runs on (`nil`: the real one).
    public var clock: VirtualClock?
    /// Randomness, built options' challenges and sync delays drawn from `seed` (`nil`: live).
    public var seed: UInt64?
    /// The CA its attestations chain to (`nil`: one made for the account).
    public var attestationCA: AttestationCA?

    public init(path: String, passphrase: SecureBytes, kdf: KDFLevel = .interactive, devices: [DeviceSpec],
                profile: String? = nil, aaguid: [UInt8]? = nil, keeping: Keeping = .durable, store: SharedStore? = nil,
                clock: VirtualClock? = nil, seed: UInt64? = nil, attestationCA: AttestationCA? = nil) {
        self.path = path
        self.passphrase = passphrase
        self.kdf = kdf
        self.devices = devices
        self.profile = profile
        self.aaguid = aaguid
        self.keeping = keeping
        self.store = store
        self.clock = clock
        self.seed = seed
        self.attestationCA = attestationCA
    }
}

extension Session {
    /// Makes the account `spec` describes and opens a session on it with `people`. Nothing is
    /// left behind when it fails: no vault (unless its shared store holds the account already,
    /// which then keeps its vault too: join it, or start on a new store), and a store whose claim
    /// it took free again.
    public static func create(_ spec: AccountSpec, people: any People = Nobody()) throws(SessionError) -> Session {
        var made = false
        do {
            return try creating(spec, people: people, made: &made)
        } catch {
            // The account is closed by now (nothing holds it), so its vault can go.
            if made && spec.store == nil { try? Device.removeVault(at: spec.path) }
            throw error
        }
    }

    private static func creating(_ spec: AccountSpec, people: any People, made: inout Bool) throws(SessionError) -> Session {
        guard let first = spec.devices.first else { throw SessionError(.badInput, "an account starts with a device") }
        let wallClock = spec.clock?.wallClock ?? .live
        let random = spec.seed.map { RandomSource.seeded($0) } ?? .live
        let account: Account
        var claim: Account.StoreClaim?
        if let store = spec.store {
            do { claim = try Account.claimStore(store.address) } catch { throw SessionError(error) }
            do { try store.show?(store.recoverySecret) } catch {
                claim?.release()
                throw error
            }
        }
        do {
            let (durability, sharing, inMemory): (Vault.Durability, Vault.Sharing, Bool) = switch spec.keeping {
            case .durable: (.full, .shared, false)
            case .held: (.full, .held, false)
            case .throwAway(let storeInMemory): (.none, .held, storeInMemory)
            }
            account = try Account.create(at: spec.path, passphrase: spec.passphrase, kdf: spec.kdf, deviceName: first.name,
                                         biometricPIN: first.pin, maxPINAttempts: first.maxPINAttempts, clock: wallClock, random: random,
                                         durability: durability, sharing: sharing, storeInMemory: inMemory,
                                         attestationCA: spec.attestationCA, storePath: spec.store?.address)
            made = true
            // Other machines' devices join with it (authctl init --join STORE --recovery).
            if let store = spec.store { try account.publishRecovery(secret: store.recoverySecret, pin: first.pin) }
        } catch {
            claim?.release()
            throw SessionError(error)
        }
        let session = Session(account: account, clock: spec.clock, builtOptions: spec.seed.map { .seeded($0) } ?? .live, people: people)
        if let seed = spec.seed { try session.setSyncOptions(seed: seed) }
        if let profile = spec.profile { try session.setProfile(profile, aaguid: spec.aaguid) }
        if let profile = first.profile { try session.setProfile(profile, aaguid: first.aaguid, device: first.name) }
        for device in spec.devices.dropFirst() {
            try session.addDevice(device.name, pin: device.pin, maxPINAttempts: device.maxPINAttempts, profile: device.profile,
                                  aaguid: device.aaguid)
        }
        return session
    }
}
