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
    private(set) var items: [Item]
    /// Positions in ``items``: by item id, by credential id, and by user handle (a ceremony looks
    /// a passkey up by one of these, and should not scan the RP's list to find it).
    private var positionOfItem = [[UInt8]: Int]()
    private var positionOfCredential = [[UInt8]: Int]()
    private var positionsOfUser = [[UInt8]: [Int]]()

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

    /// A view of `items`, already in ``creationOrder(_:_:)``.
    init(ordered items: [Item]) {
        self.items = items
        reindex(from: 0)
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
        if let at = positionOfItem[item.itemId] {
            let old = items[at]
            let stays = (at == 0 || Self.creationOrder(items[at - 1], item)) && (at == items.count - 1 || Self.creationOrder(item, items[at + 1]))
            if stays && old.credential.id == item.credential.id && old.credential.userHandle == item.credential.userHandle {
                items[at] = item
                return
            }
            remove(itemId: item.itemId)
        }
        // The first position whose item comes after this one: usually the end (a new passkey is the newest).
        var low = 0, high = items.count
        if let last = items.last, Self.creationOrder(last, item) {
            low = high
        }
        while low < high {
            let mid = (low + high) / 2
            if Self.creationOrder(items[mid], item) { low = mid + 1 } else { high = mid }
        }
        items.insert(item, at: low)
        reindex(from: low, put: true)
    }

    /// Takes passkey `itemId` out of the view.
    mutating func remove(itemId: [UInt8]) {
        guard let at = positionOfItem[itemId] else { return }
        let old = items.remove(at: at)
        positionOfItem[itemId] = nil
        positionOfCredential[old.credential.id] = nil
        positionsOfUser[old.credential.userHandle]?.removeAll { $0 == at }
        if positionsOfUser[old.credential.userHandle]?.isEmpty == true { positionsOfUser[old.credential.userHandle] = nil }
        reindex(from: at)
    }

    /// Brings the positions up to date after an item was put at or removed from `start`: one more
    /// for an item put at the end (a new passkey, the usual case), none for the last removed, else
    /// all of them.
    private mutating func reindex(from start: Int, put: Bool = false) {
        guard start < items.count else { return }
        if put && start > 0 && start == items.count - 1 {
            index(start)
            return
        }
        positionOfItem = [:]
        positionOfCredential = [:]
        positionsOfUser = [:]
        for i in items.indices { index(i) }
    }

    private mutating func index(_ i: Int) {
        positionOfItem[items[i].itemId] = i
        positionOfCredential[items[i].credential.id] = i
        positionsOfUser[items[i].credential.userHandle, default: []].append(i)
    }

    /// The one order of passkeys every device uses — the list's, and so the default passkey (the
    /// last): creation instant (milliseconds, then the vault position it was made at, for several
    /// made in one millisecond), then item id. Nothing in it depends on when or in what order the
    /// device received them, so two devices holding the same passkeys list them alike.
    static func creationOrder(_ a: Item, _ b: Item) -> Bool {
        if a.winner.created != b.winner.created { return a.winner.created < b.winner.created }
        return a.itemId.lexicographicallyPrecedes(b.itemId)
    }

    func item(credentialId: [UInt8]) -> Item? { positionOfCredential[credentialId].map { items[$0] } }

    /// The passkeys whose credential ids are among `ids`, oldest first.
    func items(credentialIds ids: Set<[UInt8]>) -> [Item] { ids.compactMap { positionOfCredential[$0] }.sorted().map { items[$0] } }

    /// The passkeys of user `userHandle`, oldest first.
    func items(userHandle: [UInt8]) -> [Item] { (positionsOfUser[userHandle] ?? []).sorted().map { items[$0] } }
}
