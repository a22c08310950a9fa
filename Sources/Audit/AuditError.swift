import Session

/// Why an audit could not run or what it found, as the error table names it (docs/errors.md):
/// `auditFindings` when the RP accepted what it must refuse (or, with `--fail-on`, answered with a
/// server error), `rpUnusable` when the RP could not be audited at all (unreachable, an answer too
/// large, slow or not what the profile says, a baseline ceremony that fails), `badInput` for a
/// profile that is not one.
package struct AuditError: Error, Sendable {
    package let name: SessionError.Name
    package let message: String

    package init(_ name: SessionError.Name, _ message: String) { (self.name, self.message) = (name, message) }

    package var sessionError: SessionError { SessionError(name, message) }
}
