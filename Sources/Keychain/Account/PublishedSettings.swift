import KeyVault
import SyncStore

/// The account's sync settings as the store holds them (metadata key `settings`): the account's
/// upload and download delays, the seed of their draws and how BS is reported, as the last `sync
/// set` in any vault left them. Each vault takes up a version it has not taken yet, from the moment
/// it reads it; a `sync set` publishes the result under compare-and-swap on the version, merged onto
/// what another vault published meanwhile (docs/sync.md, "Sync settings across vaults").
struct PublishedSettings: Equatable {
    static let key = "settings"
    static let format: UInt8 = 1
    private static let recordId = Array("AUTHCTL-SETTINGS".utf8)

    enum Tag {
        static let uploadDelay: UInt8 = 1, downloadDelay: UInt8 = 2, seed: UInt8 = 3, backupStateImmediate: UInt8 = 4
    }

    var uploadDelay: DelayRange?
    var downloadDelay: DelayRange?
    var seed: UInt64?
    var backupStateImmediate: Bool?

    /// What `settings` has in force at `time`.
    init(_ settings: AccountSettings, at time: Instant) {
        uploadDelay = settings.uploadDelay.value(at: time)
        downloadDelay = settings.downloadDelay.value(at: time)
        seed = settings.seed.value(at: time)?.value
        backupStateImmediate = settings.backupStateImmediate
    }

    private init?(_ records: [VaultRecord]) {
        guard let r = records.first(where: { $0.id == Self.recordId }) else { return nil }
        uploadDelay = r.field(Tag.uploadDelay).flatMap { DelayRange(bytes: $0) }
        downloadDelay = r.field(Tag.downloadDelay).flatMap { DelayRange(bytes: $0) }
        seed = try? r.integer(Tag.seed, as: UInt64.self)
        backupStateImmediate = r.field(Tag.backupStateImmediate).map { $0.elementsEqual([1]) }
    }

    private var record: VaultRecord {
        var r = VaultRecord(id: Self.recordId, kind: .settings)
        r.setField(Tag.uploadDelay, uploadDelay?.bytes)
        r.setField(Tag.downloadDelay, downloadDelay?.bytes)
        r.setInteger(Tag.seed, seed)
        r.setField(Tag.backupStateImmediate, backupStateImmediate.map { [$0 ? 1 : 0] })
        return r
    }

    /// The settings the store holds and their version; `nil` when there are none (or they do not
    /// open under the account key, or are of a newer format: then nothing is taken up).
    static func read(from store: any AccountStore, settings: AccountSettings) throws(StoreError) -> (version: UInt64, value: PublishedSettings?)? {
        read(try store.metadata([key])[key], settings: settings).map { ($0.version, $0.value) }
    }

    /// The settings in the store's value `stored` (read with other metadata in one call);
    /// `unreadable` when it does not open under the account key (damaged, planted) or does not decode.
    static func read(_ stored: StoreMetadata?, settings: AccountSettings) -> (version: UInt64, value: PublishedSettings?, unreadable: Bool)? {
        guard let stored else { return nil }
        guard let opened = SealedMetadata.open(stored.bytes, known: format, key: key, accountKey: settings.accountKey,
                                               accountId: settings.accountId)
        else { return (stored.version, nil, true) }
        guard opened.format == format else { return (stored.version, nil, false) }
        guard let value = PublishedSettings(opened.records) else { return (stored.version, nil, true) }
        return (stored.version, value, false)
    }

    /// Publishes `change` applied to what the store holds (another vault's publication first, when
    /// there is one); returns the version stored and the settings as stored.
    static func publish(_ change: (inout PublishedSettings) -> Void, base: PublishedSettings, to store: any AccountStore,
                        settings: AccountSettings) throws(StoreError) -> (version: UInt64, value: PublishedSettings) {
        for _ in 0..<8 {
            let current = try read(from: store, settings: settings)
            var next = current?.value ?? base
            change(&next)
            let bytes = SealedMetadata.seal([next.record], format: format, key: key, accountKey: settings.accountKey,
                                            accountId: settings.accountId)
            do throws(StoreError) {
                return (try store.setMetadata(key, bytes, expecting: current?.version ?? 0), next)
            } catch {
                guard case .conflict = error.kind else { throw error }
            }
        }
        throw StoreError(.conflict(current: 0), "the account store's sync settings kept changing while this vault published its own")
    }
}
