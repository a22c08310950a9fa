/// What can go wrong with a vault. The CLI maps these to the product's error vocabulary.
public struct VaultError: Error, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// No vault at the path (no header file).
        case notFound
        /// A vault already exists where one is being created.
        case exists
        /// The passphrase does not unwrap the vault key.
        case locked
        /// Bytes on disk are damaged or were tampered with.
        case corrupted
        /// The operating system refused a file operation.
        case io
        /// A caller error (an unknown record, say).
        case invalid
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
