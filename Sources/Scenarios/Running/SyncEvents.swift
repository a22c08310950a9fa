import Session

extension SyncEvent {
    /// `# sync at 2s: phone uploaded alice`: a comment, so that the timeline still reads back as
    /// a scenario (a transfer can happen in the middle of a `wait`, before the step's own time).
    var timelineLine: String {
        "# sync at \(DelayRange.text(milliseconds: time)): \(device) \(direction)ed \(removal ? "-" : "")\(passkey)"
    }
}

/// A change the account will never let win (``DroppedRevision``): made by a device to a passkey
/// another device had deleted, before the deletion reached it. Always in the timeline.
public struct DroppedChange: Encodable, Sendable {
    /// Milliseconds since the scenario began.
    public let time: UInt64
    public let device: String
    /// The passkey's label (its credential id when it has none), and the revision's id.
    public let passkey: String
    public let revision: String
    /// The device that deleted the passkey, and when (milliseconds since the scenario began).
    public let deletedBy: String
    public let deletedAt: UInt64

    /// `# dropped at 6s: laptop's revision Ab… of counting, made after phone deleted it at 5s`: a
    /// comment, so the timeline still reads back as a scenario.
    var timelineLine: String {
        "# dropped at \(DelayRange.text(milliseconds: time)): \(device)'s revision \(revision) of \(passkey), made after "
            + "\(deletedBy) deleted it at \(DelayRange.text(milliseconds: deletedAt)) (the deletion wins)"
    }
}
