/// Why a file operation failed, and the sentence that says so (naming the file). The vault and the
/// account store each name it in their own errors, by its reason: what is missing, planted or
/// damaged means one thing to a vault and another to a store that may be down.
package struct FileFailure: Error, Equatable, Sendable, CustomStringConvertible {
    package enum Reason: Sendable, Equatable {
        /// Nothing at the path.
        case missing
        /// A symbolic link where a file was expected: never followed.
        case link
        /// Something other than a regular file (a directory, a FIFO, a socket, a device).
        case notRegular
        /// A file another user owns.
        case otherUser
        /// Longer than what a file of its kind may hold.
        case tooLarge
        /// Shorter than what names it says.
        case truncated
        /// The operating system refused the call (its error is in the message).
        case system
        /// A lock another process still held when the wait for it ran out (``FileLock``).
        case busy
    }

    package let reason: Reason
    package let message: String

    package init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    package var description: String { message }
}
