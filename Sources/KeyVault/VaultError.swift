/// What can go wrong with a vault. The device library maps these to its own errors.
package struct VaultError: Error, Equatable, Sendable, CustomStringConvertible {
    package enum Kind: Sendable, Equatable, CaseIterable {
        /// No vault at the path (no header file).
        case notFound
        /// A vault already exists where one is being created.
        case exists
        /// The passphrase does not unwrap the vault key.
        case locked
        /// Bytes on disk are damaged or were tampered with.
        case corrupted
        /// The vault was written in a format newer than this binary knows (a header, sync state
        /// or other version above its own): nothing of it is read further or written.
        case tooNew
        /// The operating system refused a file operation.
        case io
        /// Another process holds the vault longer than the caller would wait, or changed it under
        /// this one.
        case busy
        /// The vault's directory or one of its files belongs to another user or can be written by
        /// others: something in it could have been planted.
        case unsafe
        /// A caller error (an unknown record, say).
        case invalid
        /// A promise of the program itself broken (a write through a vault opened to read, a
        /// change that does not raise its record's version): a bug, not anything a caller typed.
        case inconsistent
    }

    package let kind: Kind
    package let message: String

    package init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    package var description: String { message }
}
