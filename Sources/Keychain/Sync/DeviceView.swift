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
    let items: [Item]

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
            let revisions = seen.map(\.revision)
            // A deletion is final: it wins over earlier changes by last-writer-wins, and over later
            // ones because a device that made one had not received it (one that had no longer
            // holds the passkey) — such a change is dropped, never bringing the passkey back.
            guard let winner = revisions.max(by: Revision.precedes), !revisions.contains(where: \.removed) else { continue }
            var credential = winner.credential
            credential.signCount = revisions.filter { !$0.removed }.map(\.credential.signCount).max() ?? 0
            let firstLanded = revisions.compactMap(landedAt).min()
            if !credential.backupStateFixed {
                credential.backupState = credential.backupEligible && (backupStateImmediate || firstLanded.map { $0 <= now } ?? false)
            }
            items.append(Item(credential: credential, itemId: itemId, winner: winner, since: seen.map(\.at).min() ?? .zero))
        }
        self.items = items.sorted(by: Self.creationOrder)
    }

    /// The one order of passkeys every device uses — the list's, and so the default passkey (the
    /// last): creation instant (milliseconds, then the vault position it was made at, for several
    /// made in one millisecond), then item id. Nothing in it depends on when or in what order the
    /// device received them, so two devices holding the same passkeys list them alike.
    static func creationOrder(_ a: Item, _ b: Item) -> Bool {
        if a.winner.created != b.winner.created { return a.winner.created < b.winner.created }
        return a.itemId.lexicographicallyPrecedes(b.itemId)
    }

    func item(credentialId: [UInt8]) -> Item? { items.first { $0.credential.id == credentialId } }
}
