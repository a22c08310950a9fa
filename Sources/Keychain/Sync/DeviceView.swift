import VirtualAuthenticator

/// What one device holds at one moment: every passkey whose revisions have reached it, each as its
/// winning revision leaves it. Computed, not stored, from the revisions it made itself and those
/// that have arrived by then (AccountSync.swift).
///
/// Concurrent changes to one passkey on two devices resolve the same way on every device:
/// last-writer-wins by ``Revision/precedes(_:_:)`` (the later change — in one millisecond, the one
/// written later — then the greater device name, then the greater revision id), except that a
/// removal the device holds deletes the passkey whatever came after it (``DroppedRevision``). The signature count is the highest any arrived revision reports, so it
/// never goes back. BS is 1 once any arrived revision of the passkey has landed in the store.
struct DeviceView {
    struct Item {
        /// As the device reports it: the winner's state, the highest count, BS as it stands now.
        let credential: Credential
        let itemId: [UInt8]
        let winner: Revision
        /// When the passkey was first visible to this device.
        let since: Instant
    }

    /// Oldest first (the order an account picker lists them, the newest last), by ``creationOrder(_:_:)``.
    var items: [Item] { order }
    var count: Int { order.count }
    /// The items in ``creationOrder(_:_:)`` — kept as they are, so the list (``items``, asked for by
    /// every listing) is this array shared, not an item looked up by id each — and the items' ids
    /// by item id, credential id, user handle and user name (a ceremony looks a passkey up by one
    /// of these — an account picker by name — and should not scan the RP's list). Ids rather than
    /// positions: a passkey put anywhere but at the end (one that arrived late) moves every
    /// position after it, and the indexes would all be made again.
    private var order = [Item]()
    private var byItem = [[UInt8]: Item]()
    private var itemOfCredential = [[UInt8]: [UInt8]]()
    private var itemsOfUser = [[UInt8]: ItemIds]()
    private var itemsOfUserName = [String: ItemIds]()
    /// Every item of a credential id that more than one passkey has held at once (two devices
    /// imported one export before either synced): ``itemOfCredential`` names one of them, or
    /// none once that one is gone. Kept while it says more than ``itemOfCredential`` does; as a
    /// rule empty.
    private var sharedCredentialIds = [[UInt8]: Set<[UInt8]>]()

    /// - Parameters:
    ///   - visible: the revisions the device has by `now`, each with the moment it got it (its own
    ///     changes when made, others when they arrived);
    ///   - landedAt: when a revision reached the store (`nil`: not yet);
    ///   - backupStateImmediate: report BS=1 from the start, rather than once an upload landed.
    init(visible list: [(Revision, Instant)], at now: Instant, landedAt: (Revision) -> Instant?, backupStateImmediate: Bool) {
        var visible = [[UInt8]: (revision: Revision, at: Instant)]()
        for (revision, at) in list where visible[revision.id].map({ at < $0.at }) ?? true { visible[revision.id] = (revision, at) }
        let byItem = Dictionary(grouping: visible.values, by: { $0.revision.itemId })
        var items = [Item]()
        for (itemId, seen) in byItem {
            if let item = Self.item(itemId, seen: seen, at: now, landedAt: landedAt, backupStateImmediate: backupStateImmediate).item {
                items.append(item)
            }
        }
        // Sorted by index, not by moving items: an item is large (a credential and its revision).
        self.init(ordered: items.indices.sorted { Self.creationOrder(items[$0], items[$1]) }.map { items[$0] })
    }

    /// Room for `count` passkeys in the list and each index, so that a view filled one passkey at
    /// a time (a kept view made afresh) does not rehash them at every doubling.
    mutating func reserveCapacity(_ count: Int) {
        order.reserveCapacity(count)
        byItem.reserveCapacity(count)
        itemOfCredential.reserveCapacity(count)
        itemsOfUser.reserveCapacity(count)
        itemsOfUserName.reserveCapacity(count)
    }

    /// A view of `items`, already in ``creationOrder(_:_:)``.
    init(ordered items: [Item]) {
        // Room for every passkey at once: growing rehashes each index's keys at every doubling.
        reserveCapacity(items.count)
        order = items
        for item in items { index(item) }
    }

    /// What the device holds of one passkey, from the revisions of it the device has (each with
    /// when it got it); `nil` once a removal is among them. `backupStateTurnsOn`: the later moment
    /// at which its BS flag becomes 1 (its first landing, after `now`), when it will.
    static func item(_ itemId: [UInt8], seen: [(revision: Revision, at: Instant)], at now: Instant,
                     landedAt: (Revision) -> Instant?, backupStateImmediate: Bool) -> (item: Item?, backupStateTurnsOn: Instant?) {
        let revisions = seen.map(\.revision)
        // A deletion is final: it wins over earlier changes by last-writer-wins, and over later
        // ones because a device that made one had not received it (one that had no longer
        // holds the passkey) — such a change is dropped, never bringing the passkey back.
        guard let winner = revisions.max(by: Revision.precedes), !revisions.contains(where: \.removed) else { return (nil, nil) }
        var credential = winner.credential
        credential.signCount = revisions.filter { !$0.removed }.map(\.credential.signCount).max() ?? 0
        var turnsOn: Instant?
        if !credential.backupStateFixed {
            let firstLanded = revisions.compactMap(landedAt).min()
            let landed = firstLanded.map { $0 <= now } ?? false
            credential.backupState = credential.backupEligible && (backupStateImmediate || landed)
            if credential.backupEligible && !backupStateImmediate && !landed { turnsOn = firstLanded }
        }
        return (Item(credential: credential, itemId: itemId, winner: winner, since: seen.map(\.at).min() ?? .zero), turnsOn)
    }

    /// Puts `item` in its place, replacing the passkey's item if the view has one.
    mutating func put(_ item: Item) {
        if let old = byItem[item.itemId] {
            let at = position(of: old)
            let stays = (at == 0 || Self.creationOrder(order[at - 1], item))
                && (at == order.count - 1 || Self.creationOrder(item, order[at + 1]))
            if stays {
                unindex(old)
                index(item)
                order[at] = item
                return
            }
            remove(itemId: item.itemId)
        }
        order.insert(item, at: position(of: item))
        index(item)
    }

    /// Takes passkey `itemId` out of the view.
    mutating func remove(itemId: [UInt8]) {
        guard let old = byItem[itemId] else { return }
        order.remove(at: position(of: old))
        unindex(old)
    }

    /// Where `item` is in ``order``, or would go: the first position whose item does not come
    /// before it. Usually the end (a new passkey is the newest).
    private func position(of item: Item) -> Int {
        var low = 0, high = order.count
        if let last = order.last, Self.creationOrder(last, item) { return high }
        while low < high {
            let mid = (low + high) / 2
            if Self.creationOrder(order[mid], item) { low = mid + 1 } else { high = mid }
        }
        return low
    }

    private mutating func index(_ item: Item) {
        let id = item.credential.id
        byItem[item.itemId] = item
        let other = itemOfCredential.updateValue(item.itemId, forKey: id)
        if !sharedCredentialIds.isEmpty && sharedCredentialIds[id] != nil {
            sharedCredentialIds[id]!.insert(item.itemId)
        } else if let other, other != item.itemId {
            sharedCredentialIds[id] = [other, item.itemId]
        }
        ItemIds.insert(item.itemId, at: item.credential.userHandle, in: &itemsOfUser)
        ItemIds.insert(item.itemId, at: item.credential.userName, in: &itemsOfUserName)
    }

    private mutating func unindex(_ item: Item) {
        let id = item.credential.id
        byItem[item.itemId] = nil
        if itemOfCredential[id] == item.itemId { itemOfCredential[id] = nil }
        if !sharedCredentialIds.isEmpty, var shared = sharedCredentialIds[id] {
            shared.remove(item.itemId)
            let exact = shared.isEmpty || (shared.count == 1 && itemOfCredential[id] == shared.first)
            sharedCredentialIds[id] = exact ? nil : shared
        }
        ItemIds.remove(item.itemId, at: item.credential.userHandle, in: &itemsOfUser)
        ItemIds.remove(item.itemId, at: item.credential.userName, in: &itemsOfUserName)
    }

    /// The one order of passkeys every device uses — the list's, and so the default passkey (the
    /// last): creation instant (milliseconds, then the vault position it was made at, for several
    /// made in one millisecond), then item id. Nothing in it depends on when or in what order the
    /// device received them, so two devices holding the same passkeys list them alike.
    static func creationOrder(_ a: Item, _ b: Item) -> Bool {
        if a.winner.created != b.winner.created { return a.winner.created < b.winner.created }
        return a.itemId.lexicographicallyPrecedes(b.itemId)
    }

    func item(credentialId: [UInt8]) -> Item? { itemOfCredential[credentialId].flatMap { byItem[$0] } }

    /// The passkey at `position` of ``items`` (`0 ..< count`), without making the list.
    func item(at position: Int) -> Item { order[position] }

    /// The positions in ``items``, ascending, of every passkey with credential id `id`.
    func positions(credentialId id: [UInt8]) -> [Int] {
        if !sharedCredentialIds.isEmpty, let shared = sharedCredentialIds[id] { return positions(of: shared) }
        return itemOfCredential[id].map { positions(of: [$0]) } ?? []
    }

    /// The positions in ``items``, ascending, of every passkey of user `handle`.
    func positions(userHandle handle: [UInt8]) -> [Int] { itemsOfUser[handle].map { positions(of: $0.all) } ?? [] }

    /// The positions in ``items``, ascending, of every passkey whose user name is `name`.
    func positions(userName name: String) -> [Int] { itemsOfUserName[name].map { positions(of: $0.all) } ?? [] }

    private func positions(of itemIds: some Sequence<[UInt8]>) -> [Int] {
        itemIds.compactMap { byItem[$0].map(position(of:)) }.sorted()
    }

    /// The passkeys whose credential ids are among `ids`, oldest first.
    func items(credentialIds ids: Set<[UInt8]>) -> [Item] {
        ids.compactMap { itemOfCredential[$0].flatMap { byItem[$0] } }.sorted(by: Self.creationOrder)
    }

    /// The passkeys of user `userHandle`, oldest first.
    func items(userHandle: [UInt8]) -> [Item] {
        (itemsOfUser[userHandle]?.all ?? []).compactMap { byItem[$0] }.sorted(by: Self.creationOrder)
    }
}

/// The items one key of an index names: as a rule one, held without a set of its own (a set per
/// key was most of the cost of indexing a passkey).
private enum ItemIds {
    case one([UInt8])
    case many(Set<[UInt8]>)

    var all: [[UInt8]] {
        switch self {
        case .one(let id): [id]
        case .many(let ids): Array(ids)
        }
    }

    static func insert<Key: Hashable>(_ itemId: [UInt8], at key: Key, in index: inout [Key: ItemIds]) {
        switch index[key] {
        case nil:
            index[key] = .one(itemId)
        case .one(let other)?:
            if other != itemId { index[key] = .many([other, itemId]) }
        case .many(var ids)?:
            index[key] = .one([])  // the set held once, so inserting does not copy it
            ids.insert(itemId)
            index[key] = .many(ids)
        }
    }

    static func remove<Key: Hashable>(_ itemId: [UInt8], at key: Key, in index: inout [Key: ItemIds]) {
        switch index[key] {
        case nil:
            return
        case .one(let other)?:
            if other == itemId { index[key] = nil }
        case .many(var ids)?:
            index[key] = .one([])
            ids.remove(itemId)
            index[key] = ids.count == 1 ? .one(ids.first!) : .many(ids)
        }
    }
}
