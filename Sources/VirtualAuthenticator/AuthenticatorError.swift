/// The product's one error vocabulary, and the one table that maps it to the worlds a user meets:
/// Apple's `ASAuthorizationError` codes, WebAuthn `DOMException` names, CTAP2 status codes and the
/// CLI's exit status. Deeper layers (the vault, OpenSSL, libcbor) have their own errors that are
/// mapped into this vocabulary at the boundary.
public struct AuthenticatorError: Error, Equatable, CustomStringConvertible {
    public let name: Name
    public let message: String

    public init(_ name: Name, _ message: String) {
        self.name = name
        self.message = message
    }

    public var description: String { "\(name.rawValue): \(message)" }

    public enum Name: String, CaseIterable, Sendable {
        // ASAuthorizationError names (as the seed documents use them).
        case canceled, failed, invalidResponse, notHandled, unknown, notInteractive
        case matchedExcludedCredential
        // What the seeds lack.
        case biometryLockout, timedOut
        case securityError, notSupported, badInput, usage
        case vaultLocked, vaultCorrupted, vaultNotFound, vaultExists, ioError
    }
}

extension AuthenticatorError.Name {
    /// `ASAuthorizationError.Code` raw value; `nil` where Apple has no counterpart.
    public var appleCode: Int? {
        switch self {
        case .unknown: 1000
        case .canceled: 1001
        case .invalidResponse: 1002
        case .notHandled: 1003
        case .failed: 1004
        case .notInteractive: 1005
        case .matchedExcludedCredential: 1006
        default: nil
        }
    }

    /// The `DOMException` name a browser's `navigator.credentials` call would reject with.
    public var domException: String {
        switch self {
        case .canceled, .failed, .notHandled, .notInteractive, .biometryLockout, .timedOut: "NotAllowedError"
        case .matchedExcludedCredential: "InvalidStateError"
        case .securityError: "SecurityError"
        case .notSupported: "NotSupportedError"
        case .badInput, .usage: "TypeError"
        case .invalidResponse, .unknown, .vaultLocked, .vaultCorrupted, .vaultNotFound,
            .vaultExists, .ioError:
            "UnknownError"
        }
    }

    /// The CTAP 2.1 status byte an authenticator would return; `nil` for client-side errors.
    public var ctapStatus: UInt8? {
        switch self {
        case .canceled: 0x27  // CTAP2_ERR_OPERATION_DENIED
        case .failed: 0x3F  // CTAP2_ERR_UV_INVALID
        case .biometryLockout: 0x3C  // CTAP2_ERR_UV_BLOCKED
        case .timedOut: 0x2F  // CTAP2_ERR_USER_ACTION_TIMEOUT
        case .notHandled: 0x2E  // CTAP2_ERR_NO_CREDENTIALS
        case .matchedExcludedCredential: 0x19  // CTAP2_ERR_CREDENTIAL_EXCLUDED
        case .notSupported: 0x26  // CTAP2_ERR_UNSUPPORTED_ALGORITHM
        case .invalidResponse: 0x12  // CTAP2_ERR_INVALID_CBOR
        case .badInput: 0x02  // CTAP1_ERR_INVALID_PARAMETER
        case .unknown, .vaultLocked, .vaultCorrupted, .vaultNotFound, .vaultExists, .ioError:
            0x7F  // CTAP1_ERR_OTHER
        case .securityError, .notInteractive, .usage: nil
        }
    }

    /// The CLI's exit status. sysexits where one fits; 10–29 for the WebAuthn outcomes.
    public var exitCode: Int32 {
        switch self {
        case .canceled: 10
        case .failed: 11
        case .invalidResponse: 12
        case .notHandled: 13
        case .notInteractive: 14
        case .matchedExcludedCredential: 15
        case .securityError: 16
        case .notSupported: 17
        case .biometryLockout: 18
        case .timedOut: 19
        case .vaultLocked: 20
        case .vaultCorrupted: 21
        case .vaultNotFound: 22
        case .vaultExists: 23
        case .usage: 64  // EX_USAGE
        case .badInput: 65  // EX_DATAERR
        case .unknown: 70  // EX_SOFTWARE
        case .ioError: 74  // EX_IOERR
        }
    }
}
