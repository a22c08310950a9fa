/// Why an attestation statement could not be made.
package struct AttestationStatementError: Error, Sendable, CustomStringConvertible {
    package let description: String

    package init(_ description: String) { self.description = description }
    init(_ failure: OpenSSLFailure) { description = failure.description }
}
