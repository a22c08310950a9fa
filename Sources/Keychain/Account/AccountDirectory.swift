@_spi(ByteOrder) import ByteOrder
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
        /// What the device has received of each vault's uploads: per vault, vault (16) ‖ index u64.
        static let received: UInt8 = 10
        /// Its vault's own chain of uploads as the vault made it: the newest's index u64 ‖ digest (32).
        static let head: UInt8 = 11
        /// The repair request its vault answered last (16 bytes).
        static let repaired: UInt8 = 12
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
    /// Of each vault's uploads, the newest the device has received with every one before it
    /// (``SyncState/Requirement``): what collection counts by. Empty from authctl 0.3 or earlier.
    var received: SyncState.Requirement = [:]
    /// Its vault's chain as the vault made it (``ChainPosition/start``: nothing uploaded, or not said).
    var head = ChainPosition.start
    /// The repair request its vault answered last (empty: none).
    var repaired: [UInt8] = []

    /// The same device with `acknowledged` and `received` as its acknowledgements.
    func acknowledging(_ acknowledged: UInt64, received: SyncState.Requirement = [:]) -> PublishedDevice {
        var out = PublishedDevice(id: id, vaultId: vaultId, name: name, removed: removed, online: online, enrolled: enrolled,
                                  syncedFrom: syncedFrom, acknowledged: acknowledged, uploadDelay: uploadDelay, downloadDelay: downloadDelay)
        (out.received, out.head, out.repaired) = (received, head, repaired)
        return out
    }

    /// Whether it has received every upload `requirement` names.
    func holds(_ requirement: SyncState.Requirement) -> Bool {
        requirement.allSatisfy { vault, index in (received[vault] ?? 0) >= index }
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
        var vector = [UInt8]()
        for (vault, index) in received.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) { vector += vault + BigEndianBytes.of(index) }
        r.setField(Tag.received, vector.isEmpty ? nil : vector)
        r.setField(Tag.head, head.index == 0 ? nil : head.bytes)
        r.setField(Tag.repaired, repaired.isEmpty ? nil : repaired)
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
        var vector = FieldReader(Array(r.field(Tag.received) ?? []))
        while !vector.atEnd {
            guard let vault = vector.take(16), let index = vector.take(8) else { return nil }
            received[vault] = BigEndianBytes.integer(index)
        }
        if let head = r.field(Tag.head) {
            guard let read = ChainPosition(bytes: head) else { return nil }
            self.head = read
        }
        repaired = r.field(Tag.repaired).map(Array.init) ?? []
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
    /// The store's value does not open under the account key (damaged, planted): nothing is known
    /// from it, and the next publication replaces it with what this vault last read.
    var unreadable = false

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

    /// The directory the store holds now; an empty one when there is none yet, and an ``unreadable``
    /// one, at its version, when it does not open under the account key (damaged, planted).
    ///
    /// `known`: the directory as this process last read or published it; when the store's value is
    /// still at its version (a compare-and-swap moves the version with every change), it is
    /// returned rather than opened and parsed again.
    static func read(from store: any AccountStore, settings: AccountSettings, known: AccountDirectory? = nil) throws(StoreError) -> AccountDirectory {
        read(try store.metadata([key])[key], settings: settings, known: known)
    }

    /// The directory in the store's value `value` (read with other metadata in one call).
    static func read(_ value: StoreMetadata?, settings: AccountSettings, known: AccountDirectory? = nil) -> AccountDirectory {
        guard let value else { return AccountDirectory() }
        if let known, known.version == value.version, known.version != 0 { return known }
        guard let opened = SealedMetadata.open(value.bytes, known: format, key: key, accountKey: settings.accountKey,
                                               accountId: settings.accountId)
        else {
            var unreadable = AccountDirectory()
            unreadable.version = value.version
            unreadable.unreadable = true
            return unreadable
        }
        return AccountDirectory(opened, version: value.version)
    }

    /// What publishing compares while no other vault is in the directory: the devices without what
    /// they have read and uploaded (nobody else reads those; published late they are only lower).
    private static func alone(_ devices: [PublishedDevice]) -> [PublishedDevice] {
        devices.map { d in
            var out = d.acknowledging(0)
            out.head = .start
            return out
        }
    }

    /// Publishes `ours` as vault `vaultId`'s part, keeping the others', and returns the directory as
    /// stored — unchanged when the store holds that part already, or holds a newer format. While
    /// no other vault is in the directory, a change of acknowledgements or of the chain's head alone
    /// is not published (nobody else reads them; one published late is only lower, so nothing is
    /// collected early). A concurrent publication (another vault's) is read again and merged with.
    /// A directory that does not open is replaced: the other vaults' devices as `fallback` (the
    /// directory this vault last read) had them, and this vault's.
    static func publish(_ ours: [PublishedDevice], vault vaultId: [UInt8], to store: any AccountStore,
                        settings: AccountSettings, known: AccountDirectory? = nil, fallback: AccountDirectory? = nil) throws(StoreError) -> AccountDirectory {
        var current = try read(from: store, settings: settings, known: known)
        for _ in 0..<8 {
            guard !current.tooNew else { return current }
            if current.unreadable, let fallback, !fallback.unreadable, !fallback.tooNew {
                let version = current.version
                current = fallback
                current.version = version
                current.devices = fallback.elsewhere(than: vaultId)
            }
            // A device of another vault the store's directory lost (it went back) is kept as
            // `fallback` (the directory as last read) had it.
            let lost = (fallback?.elsewhere(than: vaultId) ?? []).filter { f in !current.devices.contains { $0.id == f.id } }
            let others = current.elsewhere(than: vaultId) + lost
            let mine = current.devices.filter { $0.vaultId == vaultId }
            let unchanged = lost.isEmpty && (others.isEmpty ? Self.alone(mine) == Self.alone(ours) : mine == ours)
            guard !unchanged || current.version == 0 || current.unreadable else { return current }
            var next = current
            next.devices = others + ours
            let bytes = SealedMetadata.seal(next.devices.map(\.record), format: format, key: key, accountKey: settings.accountKey,
                                            accountId: settings.accountId)
            next.unreadable = false
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
