import VirtualAuthenticator

/// What one device holds at one moment: every passkey whose revisions have reached it, each as its
/// winning revision leaves it. Computed, not stored, from the revisions it made itself and those
/// that have arrived from the account store by then (SyncSchedule).
///
/// Concurrent changes to one passkey on two devices resolve the same way on every device:
/// last-writer-wins by ``Revision/precedes(_:_:)`` (the later change, then the greater device name,
/// then the greater revision id); a winning removal deletes the passkey. The signature count is the
/// highest any arrived revision reports, so it never goes back.
struct DeviceView {
    struct Item {
        /// As the device reports it: the winner's state, the highest count, BS as it stands now.
        let credential: Credential
        let itemId: [UInt8]
        let winner: Revision
        /// When the passkey was first visible to this device.
        let since: UInt64
        let sequence: Int
    }

    /// Oldest first (the order an account picker lists them, the newest last).
    let items: [Item]

    /// - Parameters:
    ///   - own: revisions this device made since it was (re)started;
    ///   - arrivals: the other revisions with the moment each reaches this device (`nil`: not yet
    ///     scheduled, as while it is offline);
    ///   - landedAt: when a revision reached the store (`nil`: not yet);
    ///   - backupStateImmediate: report BS=1 from the start, rather than once the first upload landed.
    init(own: [Revision], arrivals: [(Revision, UInt64?)], at now: UInt64, landedAt: (Revision) -> UInt64?,
         backupStateImmediate: Bool) {
        var visible = [[UInt8]: (revision: Revision, at: UInt64)]()
        for revision in own { visible[revision.id] = (revision, revision.changedAt) }
        for (revision, arrival) in arrivals where visible[revision.id] == nil {
            if let arrival, arrival <= now { visible[revision.id] = (revision, arrival) }
        }
        let byItem = Dictionary(grouping: visible.values, by: { $0.revision.itemId })
        var items = [Item]()
        for (itemId, seen) in byItem {
            let revisions = seen.map(\.revision)
            guard let winner = revisions.max(by: Revision.precedes), !winner.removed else { continue }
            var credential = winner.credential
            credential.signCount = revisions.filter { !$0.removed }.map(\.credential.signCount).max() ?? 0
            let firstLanded = revisions.compactMap(landedAt).min()
            credential.backupState = credential.backupEligible && (backupStateImmediate || firstLanded.map { $0 <= now } ?? false)
            items.append(Item(credential: credential, itemId: itemId, winner: winner, since: seen.map(\.at).min() ?? 0,
                              sequence: revisions.map(\.sequence).min() ?? Int.max))
        }
        // Creation order: seconds, then the moment first seen, then the order revisions were
        // written here (several in one millisecond), then the item id.
        self.items = items.sorted { a, b in
            if a.credential.createdAt != b.credential.createdAt { return a.credential.createdAt < b.credential.createdAt }
            if a.since != b.since { return a.since < b.since }
            if a.sequence != b.sequence { return a.sequence < b.sequence }
            return a.itemId.lexicographicallyPrecedes(b.itemId)
        }
    }

    func item(credentialId: [UInt8]) -> Item? { items.first { $0.credential.id == credentialId } }
}
