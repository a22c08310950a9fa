import KeyVault
import SyncStore
import VirtualAuthenticator

/// The account's recovery secret: the other way a device on another machine joins, when no
/// enrolled device is at hand (as an iCloud Keychain recovery key is). Made by `init --store`,
/// shown once, never kept in a vault; the store holds the account's keys sealed under it
/// (metadata `recovery`):
///
///     the envelope of `credential export` (Argon2id at the interactive level, XChaCha20-Poly1305;
///     vault-format.md) sealing the keys a join carries (``JoinedKeys``)
///
/// 120 random bits (24 characters of Crockford's base32), so the envelope's Argon2id is not what
/// keeps it safe from whoever holds the store.
public enum RecoverySecret {
    static let metadataKey = "recovery"

    /// A new secret: 24 characters in groups of four.
    public static func make(_ random: RandomSource = .live) -> String {
        let chars = random.bytes(24).map { JoinCode.alphabet[Int($0 & 31)] }
        return stride(from: 0, to: 24, by: 4).map { String(chars[$0..<$0 + 4]) }.joined(separator: "-")
    }

    /// `text` as a secret (case, dashes and spaces ignored; O read as 0, I and L as 1).
    static func normalized(_ text: String) throws(DeviceError) -> SecureBytes {
        var chars = [UInt8]()
        for c in text.uppercased() where c != "-" && c != " " && c != "\n" && c != "\r" {
            let read: Character = c == "O" ? "0" : (c == "I" || c == "L") ? "1" : c
            guard JoinCode.alphabet.contains(read), let ascii = read.asciiValue else {
                throw DeviceError(.invalidArgument, "that is not a recovery secret (24 characters: XXXX-XXXX-XXXX-XXXX-XXXX-XXXX)")
            }
            chars.append(ascii)
        }
        guard chars.count == 24 else {
            throw DeviceError(.invalidArgument, "a recovery secret has 24 characters (XXXX-XXXX-XXXX-XXXX-XXXX-XXXX)")
        }
        return SecureBytes(consuming: &chars)
    }

    /// The keys a device joining with `secret` receives from the store at `storePath`.
    public static func keys(storePath: String, secret text: String) throws(DeviceError) -> JoinedKeys {
        let secret = try normalized(text)
        let store = try JoinRequest.openStore(storePath)
        let entry: StoreMetadata?
        do { entry = try store.metadata([metadataKey])[metadataKey] } catch { throw DeviceError(error) }
        guard let entry, !entry.bytes.isEmpty else {
            throw DeviceError(.invalidArgument, "the account at \(PostgresAddress.redacted(storePath)) has no recovery secret: approve the device from an enrolled one")
        }
        let opened: SecureBytes
        do { opened = try PassphraseEnvelope.open(entry.bytes, passphrase: secret) } catch {
            throw DeviceError(.vaultLocked, "wrong recovery secret (or the store's recovery envelope was altered)")
        }
        guard let keys = JoinedKeys(opened) else { throw DeviceError(.vaultCorrupted, "the store's recovery envelope holds no account keys") }
        return keys
    }
}

extension Account {
    /// Seals the account's keys under `secret` into the store (replacing a recovery secret made
    /// before): with `pin`, the first enrolled device's PIN, the account's biometry key too, so a
    /// device that recovers opens passkeys made with user verification.
    public func publishRecovery(secret text: String, pin: SecureBytes?) throws(DeviceError) {
        let secret = try RecoverySecret.normalized(text)
        let biometryKey = try pin.flatMap { pin throws(DeviceError) in
            try approvingBiometryKey(for: "recovery", approvedBy: nil, approver: UserPolicy(pin: pin))
        }
        let keys = JoinedKeys(accountKey: settings.accountKey, accountId: settings.accountId, biometryKey: biometryKey)
        useStore()
        guard let state = storeState else { throw DeviceError(.storage, storeProblem ?? "the account store at \(storeName) cannot be used") }
        do {
            let envelope = try PassphraseEnvelope.seal(keys.sealed, passphrase: secret, kdf: .interactive)
            let current = try state.store.metadata([RecoverySecret.metadataKey])[RecoverySecret.metadataKey]?.version ?? 0
            try state.store.setMetadata(RecoverySecret.metadataKey, envelope, expecting: current)
        } catch let error as VaultError { throw DeviceError(error) } catch let error as StoreError { throw DeviceError(error) } catch {
            throw DeviceError(.storage, "\(error)")
        }
    }

    /// Creates an account whose store is `storePath` — a `postgresql://` address or a directory
    /// from the root — shared from the start: other machines' devices join it (``JoinRequest``,
    /// ``RecoverySecret``). The store must not hold an account already.
    public static func create(at path: String, passphrase: SecureBytes, kdf: KDFLevel = .interactive, storePath: String,
                              deviceName: String = Device.defaultDeviceName, biometricPIN: SecureBytes?,
                              maxPINAttempts: UInt32 = Device.defaultMaxPINAttempts,
                              clock: WallClock = .live, random: RandomSource = .live) throws(DeviceError) -> Account {
        try requireFreshStore(storePath)
        return try create(at: path, passphrase: passphrase, kdf: kdf, deviceName: deviceName, biometricPIN: biometricPIN,
                          maxPINAttempts: maxPINAttempts, clock: clock, random: random, durability: .full, storePath: storePath)
    }

    /// Refuses a store that cannot hold a new account: one that cannot be reached or made, or
    /// that holds an account already (`invalidArgument`: join it instead).
    package static func requireFreshStore(_ storePath: String) throws(DeviceError) {
        do throws(StoreError) {
            let store: any AccountStore
            if PostgresAddress.names(storePath) {
                store = try PostgresStore(address: PostgresAddress(storePath), create: true)
            } else {
                guard storePath.hasPrefix("/") else { throw StoreError(.invalid, "a store directory is given from the root ('\(storePath)' is relative)") }
                store = try DirectoryStore(path: storePath, create: true)
            }
            let held = try store.metadata([storeIdKey, "directory"])
            let head = try store.extent().head
            if !held.isEmpty || head > 0 {
                throw StoreError(.invalid, "the store at \(PostgresAddress.redacted(storePath)) already holds an account: join it (init --join) or name another")
            }
        } catch { throw DeviceError(error) }
    }
}
