import KeyVault

/// Every revision of one RP's passkeys that the account knows — its vault's records (its devices'
/// revisions and the replicas it keeps) and what it downloaded from the store — kept in step with
/// each change instead of read again from the RP's partition: by revision id, by passkey, the
/// passkeys a device-bound revision keeps home, and the (device, passkey) pairs with more than one
/// local revision, the only ones a commit's collection has to look at (StoreSync.swift).
///
/// The same revisions ``Account/history(rpIds:)`` used to read from the partition at every call:
/// a revision is known once, by its id, whichever record (a replica) or download brought it.
final class RPHistory {
    private(set) var byId = [[UInt8]: Revision]()
    private(set) var byItem = [[UInt8]: [Revision]]()
    /// Items with a revision made backup-ineligible (``Account/History/deviceBound``).
    private(set) var deviceBound = Set<[UInt8]>()
    /// This vault's revisions by device and passkey (origin id ‖ item id), and the keys with more
    /// than one: the revisions a later one of the same device may supersede.
    private(set) var localGroups = [[UInt8]: [Revision]]()
    private(set) var severalLocal = Set<[UInt8]>()
    /// The revision each vault record of the RP holds (a replica's id differs from its revision's).
    private(set) var revisionOfRecord = [[UInt8]: [UInt8]]()
    /// Every revision added (`true`) or forgotten (`false`), in that order: what a kept device
    /// view (``KeptDeviceView``) has not seen yet is the tail after the changes it has.
    private(set) var changes = [(revision: Revision, added: Bool)]()

    var revisions: [Revision] { Array(byId.values) }

    static func groupKey(_ r: Revision) -> [UInt8] { r.originId + r.itemId }

    /// Room for `count` revisions, for a history read at once from its RP's records.
    func reserveCapacity(_ count: Int) {
        byId.reserveCapacity(count)
        byItem.reserveCapacity(count)
        revisionOfRecord.reserveCapacity(count)
        changes.reserveCapacity(count)
    }

    static func isLocal(_ r: Revision) -> Bool { if case .local = r.source { true } else { false } }

    /// Adds `revision`, read from vault record `recordId` (`nil`: downloaded, not kept in the
    /// vault); a revision already known is not added twice.
    func add(_ revision: Revision, recordId: [UInt8]?) {
        if let recordId { revisionOfRecord[recordId] = revision.id }
        guard byId[revision.id] == nil else { return }
        byId[revision.id] = revision
        changes.append((revision, true))
        byItem[revision.itemId, default: []].append(revision)
        if !revision.removed && !revision.credential.backupEligible { deviceBound.insert(revision.itemId) }
        guard Self.isLocal(revision) else { return }
        let key = Self.groupKey(revision)
        localGroups[key, default: []].append(revision)
        if localGroups[key]!.count > 1 { severalLocal.insert(key) }
    }

    /// Forgets the revision vault record `recordId` held (the record became a tombstone).
    func remove(recordId: [UInt8]) {
        guard let id = revisionOfRecord.removeValue(forKey: recordId), let revision = byId.removeValue(forKey: id) else { return }
        changes.append((revision, false))
        let item = revision.itemId
        byItem[item]?.removeAll { $0.id == id }
        if byItem[item]?.isEmpty == true { byItem[item] = nil }
        if byItem[item]?.contains(where: { !$0.removed && !$0.credential.backupEligible }) != true { deviceBound.remove(item) }
        let key = Self.groupKey(revision)
        localGroups[key]?.removeAll { $0.id == id }
        if localGroups[key]?.isEmpty == true { localGroups[key] = nil }
        if (localGroups[key]?.count ?? 0) <= 1 { severalLocal.remove(key) }
    }

    /// Whether one of this vault's revisions of `item` is device-bound (what never uploads).
    func locallyDeviceBound(_ item: [UInt8]) -> Bool {
        deviceBound.contains(item) && byItem[item]!.contains { Self.isLocal($0) && !$0.removed && !$0.credential.backupEligible }
    }
}

/// Which passkeys an ``RPHistory`` holds: all of one RP's, or those of one of its users (on an RP
/// whose partition the vault splits by user, what a ceremony naming a passkey or a user reads).
struct HistoryScope: Hashable {
    let rpId: String
    /// `nil`: every user's.
    let user: [UInt8]?

    static func whole(_ rpId: String) -> HistoryScope { HistoryScope(rpId: rpId, user: nil) }
}

/// The account's ``RPHistory``s, one per scope asked about (an RP, or one user of an RP), kept in
/// the vault's derived values: the vault hands it every record that changes (``follow(_:)``),
/// which it queues for the histories it belongs to until the account next asks
/// (``Account/rpHistory(_:)``), so following a change costs nothing until it matters and nothing
/// at all for RPs nobody asked about.
final class RPHistories {
    var byScope = [HistoryScope: RPHistory]()
    /// How many users' histories are kept of each RP (a record of an RP without one is looked
    /// up no further).
    var usersKept = [String: Int]()
    /// The RP of each vault record a history holds, and the user of each a user's history holds,
    /// for tombstones (which name only the id).
    var rpOfRecord = [[UInt8]: String]()
    var userOfRecord = [[UInt8]: [UInt8]]()
    /// Changed records of known RPs, in the order they changed, not applied yet.
    var queued = [VaultRecord]()
    /// ``StoreLink/generation`` the histories were made under: downloaded revisions belong to
    /// the store state they came with.
    var storeGeneration = 0

    func follow(_ record: VaultRecord) -> Bool {
        guard !byScope.isEmpty else { return true }
        if record.kind == .credential {
            if let rp = record.field(CredentialRecord.Tag.rpId).flatMap({ String(validating: Array($0), as: UTF8.self) }),
               !scopes(rp: rp, user: record.field(CredentialRecord.Tag.userHandle).map(Array.init)).isEmpty {
                queued.append(record)
            }
        } else if rpOfRecord[record.id] != nil {
            queued.append(record)  // a tombstone, or a record turned into another kind
        }
        return true
    }

    /// The scopes kept that hold the records of RP `rp` and user `user`.
    func scopes(rp: String, user: [UInt8]?) -> [HistoryScope] {
        var out = [HistoryScope]()
        if byScope[.whole(rp)] != nil { out.append(.whole(rp)) }
        if let user, usersKept[rp] != nil, byScope[HistoryScope(rpId: rp, user: user)] != nil { out.append(HistoryScope(rpId: rp, user: user)) }
        return out
    }

    func keep(_ history: RPHistory, as scope: HistoryScope) {
        byScope[scope] = history
        if scope.user != nil { usersKept[scope.rpId, default: 0] += 1 }
    }

    func forget(_ scope: HistoryScope) {
        guard byScope.removeValue(forKey: scope) != nil, scope.user != nil else { return }
        usersKept[scope.rpId]! -= 1
        if usersKept[scope.rpId] == 0 { usersKept[scope.rpId] = nil }
    }

    func reset(generation: Int) {
        byScope = [:]
        usersKept = [:]
        rpOfRecord = [:]
        userOfRecord = [:]
        queued = []
        storeGeneration = generation
    }
}
