@_spi(ByteOrder) import ByteOrder
import KeyVault
import VirtualAuthenticator

/// One RP's passkeys as a device holds them now, looked at newest first, one passkey at a time:
/// what a discoverable sign-in needs for its default account (the newest passkey it may offer),
/// without decoding every revision of the RP and building the device's whole view of it.
///
/// Made from the RP's records as they are (one field or two read in place, nothing decoded): each
/// passkey's records and downloaded revisions, grouped by passkey, with an upper bound of its
/// place in ``DeviceView/creationOrder(_:_:)`` — the latest creation instant any of its
/// revisions carries (a removal carries none). Looking newest first, a passkey is worked out as
/// the device's view would (its revisions decoded, each one's visibility to the device by the
/// schedule, ``DeviceView/item(_:seen:at:landedAt:backupStateImmediate:)``) only when its bound
/// is above the best one found so far, so the search stops at the first passkey that is held,
/// offered and not outranked by any bound after it. Deletions, passkeys that have not reached the
/// device yet and a clock stepped back only make it look further; the answer is the view's.
///
/// Nothing is kept between requests: it is made from what the vault and the store link hold when
/// asked, so it cannot go stale. The whole view (``whole``), for a picker that lists every
/// candidate or looks one up by user, is the account's kept view, made on first use.
final class NewestFirst {
    private struct Entry {
        var bound: Instant
        let itemId: [UInt8]
        var records: [VaultRecord]
        var downloaded: [Revision]
    }

    private let account: Account
    private let device: DeviceRecord
    let rpId: String
    /// Every passkey of the RP with a record or a download, by bound then item id, oldest first.
    private var entries = [Entry]()
    /// Where each passkey's entry is in ``entries``.
    private var place = [[UInt8]: Int]()
    /// Of a split RP read by shard: the shards not read yet, with an upper bound of the place in
    /// creation order of every passkey they hold (``shardBound(of:)``), lowest first; and those
    /// read.
    private var pending = [(bound: [UInt8], number: Int)]()
    private var readShards = Set<Int>()
    /// The RP's revisions downloaded from the store and not in the vault.
    private var downloads = [Revision]()
    /// How many shards of the RP were read: a measure, for tests, that a discoverable sign-in
    /// reads a few shards and not the RP.
    var shardsRead: Int { readShards.count }
    /// How many shards the RP has when it is read by shard; 0 when it is read whole.
    var shards: Int { readShards.count + pending.count }
    private var wholeView: DeviceView?
    /// Why the whole view could not be made, for the store to report at its next step (``whole``
    /// is read where nothing can throw).
    private(set) var failure: VaultError?
    /// How many passkeys were worked out (decoded and resolved) by ``newest(where:)``: a measure,
    /// for tests, that it looks at a few passkeys and not at the RP.
    private(set) var resolved = 0

    init(account: Account, device: DeviceRecord, rpId: String) throws(VaultError) {
        self.account = account
        self.device = device
        self.rpId = rpId
        let rp = Array(rpId.utf8)
        if let bounds = account.vault.shardBounds(kind: .credential, field: CredentialRecord.Tag.rpId, equals: rp) {
            // A split RP whose index keeps each shard's bound: shards are read newest first, as
            // far as ``newest(where:)`` needs.
            pending = bounds.enumerated().map { (bound: $0.element, number: $0.offset) }
                .sorted { $0.bound == $1.bound ? $0.number < $1.number : $0.bound.lexicographicallyPrecedes($1.bound) }
        } else {
            add(try account.vault.records(kind: .credential, field: CredentialRecord.Tag.rpId, equals: rp))
        }
        downloads = account.storeLink.downloaded(ofRP: rpId)
        addDownloads()
        sortEntries()
    }

    /// Adds the RP's downloaded revisions to the entries of their passkeys.
    private func addDownloads() {
        for revision in downloads {
            let bound = revision.removed ? Instant.zero : revision.created
            if let i = place[revision.itemId] {
                entries[i].downloaded.append(revision)
                if entries[i].bound < bound { entries[i].bound = bound }
            } else {
                place[revision.itemId] = entries.count
                entries.append(Entry(bound: bound, itemId: revision.itemId, records: [], downloaded: [revision]))
            }
        }
    }

    /// Adds `records` of the RP to the entries of their passkeys (unsorted: ``sortEntries()`` next).
    private func add(_ records: [VaultRecord]) {
        place.reserveCapacity(place.count + records.count)
        entries.reserveCapacity(entries.count + records.count)
        for record in records {
            let itemId = Self.itemId(of: record)
            let bound = Self.bound(of: record)
            if let i = place[itemId] {
                entries[i].records.append(record)
                if entries[i].bound < bound { entries[i].bound = bound }
            } else {
                place[itemId] = entries.count
                entries.append(Entry(bound: bound, itemId: itemId, records: [record], downloaded: []))
            }
        }
    }

    private func sortEntries() {
        entries.sort { Self.precedes($0.bound, $0.itemId, $1.bound, $1.itemId) }
        for (i, entry) in entries.enumerated() { place[entry.itemId] = i }
        sorts += 1
    }

    /// How many times ``entries`` was sorted: a search's place in it holds until the next sort.
    private var sorts = 0

    /// Reads shard `number` of the RP (once) into the entries, sorted again.
    private func read(shard number: Int) throws(VaultError) {
        // Each shard read passes over the RP's records in memory: past a few, the rest at once.
        if readShards.count >= Self.shardsOneByOne { return try readRest() }
        guard !readShards.contains(number) else { return }
        // Nothing changes until the shard is read: a read that fails leaves the search as it was.
        let records = try account.vault.records(kind: .credential, field: CredentialRecord.Tag.rpId, equals: Array(rpId.utf8), shardNumber: number)
        readShards.insert(number)
        pending.removeAll { $0.number == number }
        add(records)
        sortEntries()
    }

    /// Shards read one at a time before the rest is read whole.
    static let shardsOneByOne = 16

    /// Reads every shard not read yet: the entries made again from the RP's records (a passkey
    /// worked out already had every record of its own shard, and is made again the same).
    private func readRest() throws(VaultError) {
        guard !pending.isEmpty else { return }
        let records = try account.vault.records(kind: .credential, field: CredentialRecord.Tag.rpId, equals: Array(rpId.utf8))
        for shard in pending { readShards.insert(shard.number) }
        pending = []
        entries = []
        place = [:]
        add(records)
        addDownloads()
        sortEntries()
    }

    /// Whether every record of `entry`'s passkey is among its records: its user's shard is read
    /// (a passkey's revisions all carry its user handle), or the RP is not read by shard.
    private func complete(_ entry: Entry) throws(VaultError) -> Bool {
        guard !pending.isEmpty, entry.records.isEmpty, let download = entry.downloaded.first,
              let number = account.vault.shardNumber(kind: .credential, field: CredentialRecord.Tag.rpId, equals: Array(rpId.utf8),
                                                      shard: download.credential.userHandle),
              !readShards.contains(number) else { return true }
        try read(shard: number)
        return false
    }

    /// The passkey `record` is a revision of. As a revision reads it: a replica's own id is the
    /// revision's (tag 40), not the record's.
    static func itemId(of record: VaultRecord) -> [UInt8] {
        record.field(CredentialRecord.Tag.itemId).map(Array.init) ?? record.field(StoreReplica.Tag.revisionId).map(Array.init) ?? record.id
    }

    /// What the vault's index keeps per shard of a split RP, the highest of its records': an upper
    /// bound, as 32 bytes compared big-endian, of the record's passkey's place in creation order
    /// (``DeviceView/creationOrder(_:_:)``) — ``bound(of:)`` (millisecond ‖ order) ‖ item id. An
    /// item id of another length than 16 bytes counts as all ones (above every id of its instant);
    /// a removal gives all zeros, a field that does not read all ones. Two passkeys made in one
    /// millisecond (an import, a bulk fill) still order the shards, so a discoverable sign-in reads
    /// the shard of the newest and stops.
    static func shardBound(of record: VaultRecord) -> [UInt8] {
        let bound = bound(of: record)
        if bound == .zero { return [UInt8](repeating: 0, count: 32) }
        if bound == .endOf(.max) { return [UInt8](repeating: 0xFF, count: 32) }
        let itemId = itemId(of: record)
        return BigEndianBytes.of(bound.ms) + BigEndianBytes.of(bound.order) + (itemId.count == 16 ? itemId : [UInt8](repeating: 0xFF, count: 16))
    }

    /// A passkey's place in creation order, `created` and `itemId`, as 32 bytes that no shard bound
    /// of a passkey after it can fall below: ``shardBound(of:)``'s layout, an item id of another
    /// length cut or padded with zeros to 16 bytes (at or before the id itself).
    static func place(_ created: Instant, _ itemId: [UInt8]) -> [UInt8] {
        BigEndianBytes.of(created.ms) + BigEndianBytes.of(created.order) + Array((itemId + [UInt8](repeating: 0, count: 16)).prefix(16))
    }

    /// The latest creation instant `record` can give its passkey: its own (tag 26; else its
    /// `createdAt` seconds, as ``CredentialCodec`` reads it), none for a removal. A field that
    /// does not read gives the latest instant of all, so the record is decoded — and reported as
    /// the decoding finds it — before anything is picked.
    static func bound(of record: VaultRecord) -> Instant {
        if record.field(CredentialRecord.Tag.removed)?.elementsEqual([1]) ?? false { return .zero }
        if let bytes = record.field(CredentialRecord.Tag.created) { return Instant(bytes: bytes) ?? .endOf(.max) }
        guard let seconds = try? record.integer(CredentialRecord.Tag.createdAt, as: UInt64.self) else { return .endOf(.max) }
        return Instant(ms: Revision.milliseconds(ofSeconds: seconds), order: 0)
    }

    /// ``DeviceView/creationOrder(_:_:)`` of two passkeys given by creation instant and item id.
    static func precedes(_ aCreated: Instant, _ aItem: [UInt8], _ bCreated: Instant, _ bItem: [UInt8]) -> Bool {
        if aCreated != bCreated { return aCreated < bCreated }
        return aItem.lexicographicallyPrecedes(bItem)
    }

    /// The newest passkey the device holds now for which `wanted` holds (the last such of the
    /// whole view's ``DeviceView/items``); `nil` when none does.
    func newest(where wanted: (Credential) -> Bool) throws(VaultError) -> DeviceView.Item? {
        if let wholeView {
            var position = wholeView.count - 1
            while position >= 0 {
                let item = wholeView.item(at: position)
                if wanted(item.credential) { return item }
                position -= 1
            }
            return nil
        }
        let every = try DeviceRecord.everyRecord(in: account.vault)
        var best: DeviceView.Item?
        var done = Set<[UInt8]>()
        // The search walks down the entries from the newest; a shard read sorts them again, and
        // the walk starts again from the top (a shard read at most ``shardsOneByOne`` + 1 times),
        // so the passkeys looked at cost each one step, not a pass over those above.
        var cursor = entries.count - 1, sorted = sorts
        while true {
            if sorted != sorts { cursor = entries.count - 1; sorted = sorts }
            while cursor >= 0, done.contains(entries[cursor].itemId) { cursor -= 1 }
            let candidate: Int? = cursor >= 0 ? cursor : nil
            if let shard = pending.last,
               candidate.map({ !shard.bound.lexicographicallyPrecedes(Self.place(entries[$0].bound, entries[$0].itemId)) }) ?? true {
                // The next shard may hold a passkey as new as the candidate: read it first, unless
                // the best found is newer than anything it holds (and so than the candidate).
                if let best, shard.bound.lexicographicallyPrecedes(Self.place(best.winner.created, best.itemId)) { break }
                try read(shard: shard.number)
                continue
            }
            guard let candidate else { break }
            let entry = entries[candidate]
            if let best, Self.precedes(entry.bound, entry.itemId, best.winner.created, best.itemId) { break }
            guard try complete(entry) else { continue }
            done.insert(entry.itemId)
            guard let item = try item(entry, devices: every), wanted(item.credential) else { continue }
            if best.map({ DeviceView.creationOrder($0, item) }) ?? true { best = item }
        }
        return best
    }

    /// Every passkey the device holds now, oldest first (``DeviceView/creationOrder(_:_:)``): what
    /// `list --rp-id` prints, each passkey worked out as the view would, without the history and
    /// the indexed view a process that keeps asking keeps in step.
    func all() throws(VaultError) -> [DeviceView.Item] {
        try readRest()
        let every = try DeviceRecord.everyRecord(in: account.vault)
        var items = [DeviceView.Item]()
        items.reserveCapacity(entries.count)
        for entry in entries {
            if let item = try item(entry, devices: every) { items.append(item) }
        }
        // Sorted by index, not by moving items (each a credential and its revision); as a rule
        // in order already, by bound.
        return items.indices.sorted { DeviceView.creationOrder(items[$0], items[$1]) }.map { items[$0] }
    }

    /// What the device holds now of `entry`'s passkey, worked out as ``Account/view(of:rpIds:)``
    /// works out every passkey from the records.
    private func item(_ entry: Entry, devices every: [DeviceRecord]) throws(VaultError) -> DeviceView.Item? {
        resolved += 1
        var revisions = [Revision]()
        var seen = Set<[UInt8]>()
        for r in try account.readModel.revisions(entry.records) where seen.insert(r.id).inserted { revisions.append(r) }
        for r in entry.downloaded where seen.insert(r.id).inserted { revisions.append(r) }
        let bound: Set<[UInt8]> = revisions.contains { !$0.removed && !$0.credential.backupEligible } ? [entry.itemId] : []
        let history = Account.History(revisions: revisions, devices: every, deviceBound: bound)
        let now = account.present
        let visible = revisions.compactMap { r -> (revision: Revision, at: Instant)? in
            guard let at = account.visibility(of: r, to: device, in: history) else { return nil }
            let own = r.originId == device.id && r.changedAt.order >= device.syncedFrom.order
            return own || at <= now ? (r, at) : nil
        }
        return DeviceView.item(entry.itemId, seen: visible, at: now, landedAt: { self.account.landedAt($0, in: history) },
                               backupStateImmediate: account.settings.backupStateImmediate).item
    }

    /// The device's whole view of the RP (``Account/view(of:scope:)``), made on first use; empty,
    /// with ``failure`` set, when it could not be made.
    var whole: DeviceView {
        if let wholeView { return wholeView }
        let view: DeviceView
        do { view = try account.view(of: device, scope: .whole(rpId)) } catch {
            failure = error
            view = DeviceView(ordered: [])
        }
        wholeView = view
        return view
    }
}
