/// Why an attestation statement could not be made.
public struct AttestationStatementError: Error, Sendable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }
    init(_ failure: OpenSSLFailure) { description = failure.description }
}
