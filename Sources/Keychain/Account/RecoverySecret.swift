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

    /// The keys a device named `name` joining with `secret` receives from the store at
    /// `storePath`; a name a device of the account has is refused.
    public static func keys(storePath: String, secret text: String, name: String) throws(DeviceError) -> JoinedKeys {
        try Account.checkDeviceName(name)
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
        // The envelope names the account it was made for: one copied from another account of the
        // same database (whose secret the joiner holds) does not join this one.
        let bound = Array(accountName(storePath).utf8)
        guard let keys = opened.withUnsafeBytes({ raw -> JoinedKeys? in
            guard raw.count > bound.count + 1, Int(raw[0]) == bound.count, Array(raw[1...bound.count]) == bound else { return nil }
            return JoinedKeys(SecureBytes(copying: UnsafeRawBufferPointer(rebasing: raw[(bound.count + 1)...])))
        }) else {
            throw DeviceError(.storage, "the store's recovery envelope is not this account's (it was made for another, or altered)")
        }
        try requireFreeName(name, in: store, keys: keys)
        return keys
    }

    /// What a recovery envelope is bound to: the account's name in its database, or the store
    /// directory's path.
    static func accountName(_ storePath: String) -> String {
        (try? PostgresAddress(storePath).account) ?? String(storePath.utf8.suffix(250)) ?? storePath
    }

    /// Refuses `name` when a device of the account (by the store's directory) has it.
    static func requireFreeName(_ name: String, in store: any AccountStore, keys: JoinedKeys) throws(DeviceError) {
        let value: StoreMetadata?
        do { value = try store.metadata([AccountDirectory.key])[AccountDirectory.key] } catch { throw DeviceError(error) }
        guard let value, let opened = SealedMetadata.open(value.bytes, known: AccountDirectory.format, key: AccountDirectory.key,
                                                          accountKey: keys.accountKey, accountId: keys.accountId)
        else { return }
        if opened.records.compactMap(PublishedDevice.init).contains(where: { !$0.removed && $0.name == name }) {
            throw DeviceError(.invalidArgument, "the account already has a device named '\(EchoedInput.text(name))'")
        }
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
        guard let state = storeLink.state else { throw DeviceError(.storage, storeProblem ?? "the account store at \(storeName) cannot be used") }
        let bound = Array(RecoverySecret.accountName(storePath).utf8)
        let inner = keys.sealed
        let payload = SecureBytes(count: 1 + bound.count + inner.count)
        payload.withUnsafeMutableBytes { out in
            out[0] = UInt8(bound.count)
            for (i, b) in bound.enumerated() { out[1 + i] = b }
            inner.withUnsafeBytes { k in for i in 0..<k.count { out[1 + bound.count + i] = k[i] } }
        }
        let envelope: [UInt8]
        do { envelope = try PassphraseEnvelope.seal(payload, passphrase: secret, kdf: .interactive) } catch { throw DeviceError(error) }
        do {
            let current = try state.store.metadata([RecoverySecret.metadataKey])[RecoverySecret.metadataKey]?.version ?? 0
            try state.store.setMetadata(RecoverySecret.metadataKey, envelope, expecting: current)
        } catch { throw DeviceError(error) }
    }

    /// Creates an account whose store is `storePath` — a `postgresql://` address or a directory
    /// from the root — shared from the start: other machines' devices join it (``JoinRequest``,
    /// ``RecoverySecret``). The store must not hold an account already.
    public static func create(at path: String, passphrase: SecureBytes, kdf: KDFLevel = .interactive, storePath: String,
                              deviceName: String = Device.defaultDeviceName, biometricPIN: SecureBytes?,
                              maxPINAttempts: UInt32 = Device.defaultMaxPINAttempts,
                              clock: WallClock = .live, random: RandomSource = .live) throws(DeviceError) -> Account {
        let claim = try claimStore(storePath)
        do {
            return try create(at: path, passphrase: passphrase, kdf: kdf, deviceName: deviceName, biometricPIN: biometricPIN,
                              maxPINAttempts: maxPINAttempts, clock: clock, random: random, durability: .full, storePath: storePath)
        } catch {
            claim.release()
            throw error
        }
    }

    /// A store claimed for a new account (metadata `claim`, by compare-and-swap): two `init
    /// --store` at once on one store, one wins. Released (emptied) when making the account fails,
    /// so the store is free again.
    package struct StoreClaim {
        let store: any AccountStore
        let version: UInt64

        /// Empties the claim (best effort: a store gone meanwhile stays claimed).
        package func release() { _ = try? store.setMetadata(Account.claimKey, [], expecting: version) }
    }

    static let claimKey = "claim"

    /// Claims a store for a new account: refused when it cannot be reached or made, or holds an
    /// account already, or another is claiming it (`invalidArgument`: join it instead).
    package static func claimStore(_ storePath: String) throws(DeviceError) -> StoreClaim {
        let store = try requireFreshStore(storePath)
        do {
            let current = try store.metadata([claimKey])[claimKey]
            if let current, !current.bytes.isEmpty { throw StoreError(.conflict(current: current.version), "claimed") }
            let version = try store.setMetadata(claimKey, VaultRecord.newId(), expecting: current?.version ?? 0)
            return StoreClaim(store: store, version: version)
        } catch {
            throw DeviceError(.invalidArgument, "the store at \(PostgresAddress.redacted(storePath)) already holds an account, or another is being made there: join it (init --join) or name another")
        }
    }

    /// Refuses a store that cannot hold a new account: one that cannot be reached or made, or
    /// that holds an account already (`invalidArgument`: join it instead); returns it opened.
    @discardableResult
    package static func requireFreshStore(_ storePath: String) throws(DeviceError) -> any AccountStore {
        do throws(StoreError) {
            let store: any AccountStore
            if PostgresAddress.names(storePath) {
                store = try PostgresStore(address: PostgresAddress(storePath), create: true)
            } else {
                guard storePath.hasPrefix("/") else { throw StoreError(.invalid, "a store directory is given from the root ('\(EchoedInput.path(storePath))' is relative)") }
                // A directory that holds something else is not made a store among its files (a
                // file or a link there is no directory at all: the store refuses it, unavailable).
                if DirectoryStore.isDirectory(at: storePath), !DirectoryStore.isStore(at: storePath) {
                    throw StoreError(.invalid, "\(EchoedInput.path(storePath)) is neither empty nor an account store: name a new directory")
                }
                store = try DirectoryStore(path: storePath, create: true)
            }
            let held = try store.metadata([storeIdKey, "directory"])
            let head = try store.extent().head
            if !held.isEmpty || head > 0 {
                throw StoreError(.invalid, "the store at \(PostgresAddress.redacted(storePath)) already holds an account: join it (init --join) or name another")
            }
            return store
        } catch { throw DeviceError(error) }
    }
}
