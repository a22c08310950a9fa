/// Why a port the caller supplied (its credential store, its user-verification sensor, the person's
/// PIN) failed for a reason of the storage behind it rather than with a ceremony outcome. The
/// authenticator reports every one as `unknown` (UnknownError, CTAP1_ERR_OTHER) and never looks
/// inside; it carries the reason back, typed, so the layer that supplied the port names it in its
/// own error with one exhaustive switch — no error of that layer travels through this one.
public enum PortFailure: Sendable, Equatable, CaseIterable {
    /// Nothing stored where the port looked.
    case notFound
    /// Something stored already where the port was to create it.
    case exists
    /// The secret the port was given does not open its storage.
    case locked
    /// The stored bytes are damaged, or were edited.
    case corrupted
    /// The storage was written in a format newer than this program knows.
    case tooNew
    /// The operating system refused a file operation.
    case io
    /// Another process held the storage longer than the caller would wait, or changed it underneath.
    case busy
    /// The storage belongs to another user, or others can write it.
    case unsafe
    /// What the caller gave the port cannot be used.
    case invalid
}
