import Session

/// The one user-facing error table (docs/errors.md) is the request layer's (`SessionError`): every
/// failure the command line reports has one of its names, and each name one exit code,
/// DOMException, Apple `ASAuthorizationError` code and CTAP2 status. The command line adds its own
/// usage errors in the same vocabulary.
typealias CLIError = SessionError
