/// A change to a passkey made by a device that had not yet received the passkey's deletion — a new
/// signature count, backup flags, a large blob, a signal's hide or rename. It is written and
/// travels like any revision, but it never wins: a deletion is final, so the passkey is not
/// brought back anywhere (docs/sync.md, "What a device holds").
package struct DroppedRevision: Sendable, Equatable {
    /// When the change was made (Unix ms), and by which device.
    package let time: UInt64
    package let device: String
    package let credentialId: [UInt8]
    package let revisionId: [UInt8]
    /// The device whose deletion it came after, and when that was made (Unix ms).
    package let deletedBy: String
    package let deletedAt: UInt64
}
