import KeyVault
import SyncStore

/// One device of the account as its vault publishes it in the store: who it is, which vault holds
/// it, its state, its delays now, and how far it has read the store — its **acknowledged** sequence:
/// it holds every change up to it, and had uploaded everything it made before it read them. No
/// secret: no enrollment, no key. Encoded as a record (docs/vault-format.md, "Store metadata").
struct PublishedDevice: Equatable {
    enum Tag {
        static let vault: UInt8 = 1, name: UInt8 = 2, removed: UInt8 = 3, online: UInt8 = 4, enrolled: UInt8 = 5
        static let syncedFrom: UInt8 = 6, acknowledged: UInt8 = 7, uploadDelay: UInt8 = 8, downloadDelay: UInt8 = 9
    }

    let id: [UInt8]
    let vaultId: [UInt8]
    let name: String
    let removed: Bool
    let online: Bool
    let enrolled: Bool
    /// When its replica started (ms): added, or last reset.
    let syncedFrom: UInt64
    let acknowledged: UInt64
    let uploadDelay: DelayRange
    let downloadDelay: DelayRange

    /// The same device with `acknowledged` as its acknowledged sequence.
    func acknowledging(_ acknowledged: UInt64) -> PublishedDevice {
        PublishedDevice(id: id, vaultId: vaultId, name: name, removed: removed, online: online, enrolled: enrolled,
                        syncedFrom: syncedFrom, acknowledged: acknowledged, uploadDelay: uploadDelay, downloadDelay: downloadDelay)
    }

    var record: VaultRecord {
        var r = VaultRecord(id: id, kind: .device)
        r.setField(Tag.vault, vaultId)
        r.setField(Tag.name, Array(name.utf8))
        r.setField(Tag.removed, removed ? [1] : nil)
        r.setField(Tag.online, [online ? 1 : 0])
        r.setField(Tag.enrolled, [enrolled ? 1 : 0])
        r.setInteger(Tag.syncedFrom, syncedFrom)
        r.setInteger(Tag.acknowledged, acknowledged)
        r.setField(Tag.uploadDelay, uploadDelay.bytes)
        r.setField(Tag.downloadDelay, downloadDelay.bytes)
        return r
    }

    init(id: [UInt8], vaultId: [UInt8], name: String, removed: Bool, online: Bool, enrolled: Bool, syncedFrom: UInt64,
         acknowledged: UInt64, uploadDelay: DelayRange, downloadDelay: DelayRange) {
        (self.id, self.vaultId, self.name, self.removed, self.online, self.enrolled) = (id, vaultId, name, removed, online, enrolled)
        (self.syncedFrom, self.acknowledged, self.uploadDelay, self.downloadDelay) = (syncedFrom, acknowledged, uploadDelay, downloadDelay)
    }

    /// `nil` for a record that is not a published device (a field missing or malformed).
    init?(_ r: VaultRecord) {
        guard r.id.count == 16, let vault = r.field(Tag.vault), vault.count == 16,
              let name = r.field(Tag.name).flatMap({ String(validating: Array($0), as: UTF8.self) }),
              let synced = try? r.integer(Tag.syncedFrom, as: UInt64.self), let acked = try? r.integer(Tag.acknowledged, as: UInt64.self),
              let up = r.field(Tag.uploadDelay).flatMap({ DelayRange(bytes: $0) }),
              let down = r.field(Tag.downloadDelay).flatMap({ DelayRange(bytes: $0) })
        else { return nil }
        self.init(id: r.id, vaultId: Array(vault), name: name, removed: r.field(Tag.removed) != nil,
                  online: r.field(Tag.online)?.elementsEqual([1]) ?? true, enrolled: r.field(Tag.enrolled)?.elementsEqual([1]) ?? false,
                  syncedFrom: synced, acknowledged: acked, uploadDelay: up, downloadDelay: down)
    }
}

/// The account's devices, every vault's, as the store holds them (metadata key `directory`): each
/// vault publishes its own devices, replacing its part under compare-and-swap, so a device in
/// another vault — or on another machine — is known by every vault, and tombstones are collected by
/// what every device of the account has acknowledged (docs/sync.md, "The store").
struct AccountDirectory: Equatable {
    static let key = "directory"
    /// The layout this version reads and writes; a higher one is neither read nor written.
    static let format: UInt8 = 1

    /// The store's version of the value (0: none yet).
    var version: UInt64 = 0
    var devices: [PublishedDevice] = []
    /// Of a format this version does not read: nothing is known from it, and it is not rewritten.
    var tooNew = false

    /// The devices of other vaults than `vaultId`.
    func elsewhere(than vaultId: [UInt8]) -> [PublishedDevice] { devices.filter { $0.vaultId != vaultId } }

    /// As the vault keeps it when last read (sync state tag 12): format ‖ batch, unsealed.
    var plain: [UInt8] { SealedMetadata.plain(devices.map(\.record), format: Self.format) }

    /// ``plain``, from `cache` when that was made from the same version of the same directory.
    func plain(cache: inout (version: UInt64, plain: [UInt8])?) -> [UInt8] {
        if version != 0, let cached = cache, cached.version == version { return cached.plain }
        let made = plain
        if version != 0 { cache = (version, made) }
        return made
    }

    init() {}

    init?(plain: [UInt8], version: UInt64) {
        guard let opened = SealedMetadata.parse(plain, known: Self.format) else { return nil }
        self.init(opened, version: version)
    }

    private init(_ opened: SealedMetadata.Opened, version: UInt64) {
        self.version = version
        tooNew = opened.format > Self.format
        devices = opened.records.compactMap(PublishedDevice.init)
    }

    /// The directory the store holds now; an empty one when there is none yet. One that does not
    /// open under the account key (damaged, planted) reads as empty, at its version, so the next
    /// publication replaces it.
    ///
    /// `known`: the directory as this process last read or published it; when the store's value is
    /// still at its version (a compare-and-swap moves the version with every change), it is
    /// returned rather than opened and parsed again.
    static func read(from store: any AccountStore, settings: AccountSettings, known: AccountDirectory? = nil) throws(StoreError) -> AccountDirectory {
        guard let value = try store.metadata([key])[key] else { return AccountDirectory() }
        if let known, known.version == value.version, known.version != 0 { return known }
        guard let opened = SealedMetadata.open(value.bytes, known: format, key: key, accountKey: settings.accountKey,
                                               accountId: settings.accountId)
        else {
            var unreadable = AccountDirectory()
            unreadable.version = value.version
            return unreadable
        }
        return AccountDirectory(opened, version: value.version)
    }

    /// Publishes `ours` as vault `vaultId`'s part, keeping the others', and returns the directory as
    /// stored — unchanged when the store holds that part already, or holds a newer format. While
    /// no other vault is in the directory, a change of acknowledgements alone is not published
    /// (nobody else reads them; one published late is only lower, so nothing is collected early).
    /// A concurrent publication (another vault's) is read again and merged with.
    static func publish(_ ours: [PublishedDevice], vault vaultId: [UInt8], to store: any AccountStore,
                        settings: AccountSettings, known: AccountDirectory? = nil) throws(StoreError) -> AccountDirectory {
        var current = try read(from: store, settings: settings, known: known)
        for _ in 0..<8 {
            guard !current.tooNew else { return current }
            let others = current.elsewhere(than: vaultId)
            let mine = current.devices.filter { $0.vaultId == vaultId }
            let unchanged = others.isEmpty ? mine.map { $0.acknowledging(0) } == ours.map { $0.acknowledging(0) } : mine == ours
            guard !unchanged || current.version == 0 else { return current }
            var next = current
            next.devices = others + ours
            let bytes = SealedMetadata.seal(next.devices.map(\.record), format: format, key: key, accountKey: settings.accountKey,
                                            accountId: settings.accountId)
            do throws(StoreError) {
                next.version = try store.setMetadata(key, bytes, expecting: current.version)
                return next
            } catch {
                guard case .conflict = error.kind else { throw error }
                current = try read(from: store, settings: settings)
            }
        }
        throw StoreError(.conflict(current: current.version), "the account store's device directory kept changing while this vault published its devices")
    }
}
