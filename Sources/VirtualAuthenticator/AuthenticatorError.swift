/// What a WebAuthn ceremony can end in, as the client and authenticator see it: the only error its
/// ceremonies throw, typed on every entry point (`WebAuthnClient`, `Authenticator`, the options
/// parsers) and port. (Its building blocks — CBOR, authenticator data, P-256 — throw their own
/// small errors, which the ceremonies map.) Each code carries the two names the
/// WebAuthn world gives it — the `DOMException` a browser rejects with and the CTAP 2.1 status an
/// authenticator returns — so any transport (the CLI, a server, a CTAP socket) can speak it.
/// What the vault, the command line or the operating system can go wrong with is not here: those
/// layers own their errors and map this one, once, where they meet it.
public struct AuthenticatorError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: String, CaseIterable, Sendable {
        /// The user dismissed the prompt.
        case canceled
        /// User verification failed (a wrong biometric PIN).
        case failed
        /// No eligible authenticator or credential: nothing for the RP, none of the allowed ids,
        /// verification required of an authenticator that cannot verify.
        case notHandled
        /// The user would have to be asked, and cannot be (no PIN source).
        case notInteractive
        /// excludeCredentials names a credential this authenticator holds.
        case matchedExcludedCredential
        /// User verification is blocked after too many failures.
        case biometryLockout
        /// The user did not answer within the request's timeout.
        case timedOut
        /// The origin is not a secure context, or the RP ID is not allowed for it.
        case securityError
        /// The client does not support what the options ask: no `pubKeyCredParams` entry of a
        /// supported type, an extension input that contradicts the request (NotSupportedError).
        case notSupported
        /// The options are malformed (the client's TypeError).
        case badInput
        /// A base64url member of the options JSON does not decode (the client's EncodingError,
        /// WebAuthn L3 §5.1.8, §5.1.9).
        case encodingError
        /// A value of the options that is well-formed but names nothing the call can use: a prf
        /// `evalByCredential` key that is no `allowCredentials` id (WebAuthn L3 §10.1.4, the
        /// client's SyntaxError).
        case syntaxError
        /// A deliberate fault that the request cannot produce (see ``Fault``): not a WebAuthn
        /// outcome but a misuse of this authenticator's test controls.
        case faultNotApplicable
        /// A port failed (the store, the user's device) or a library refused an operation.
        case unknown
    }

    public let code: Code
    public private(set) var message: String
    /// Why a port failed behind an `unknown`, typed, so the layer that supplied the port can name
    /// it; the authenticator never looks inside.
    public let port: PortFailure?

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
        self.port = nil
    }

    /// A port's failure for a reason of its storage: `unknown`, carrying `port`.
    public init(_ port: PortFailure, _ message: String) {
        self.code = .unknown
        self.message = message
        self.port = port
    }

    /// This error with `message` in place of its own (the same code and port failure).
    public func saying(_ message: String) -> AuthenticatorError {
        var said = self
        said.message = message
        return said
    }

    public var description: String { "\(code.rawValue): \(message)" }

    public static func == (a: AuthenticatorError, b: AuthenticatorError) -> Bool {
        a.code == b.code && a.message == b.message
    }
}

extension AuthenticatorError.Code {
    /// The `DOMException` a browser's `navigator.credentials` call rejects with (WebAuthn L3 §5.1.3,
    /// §5.1.4: every authenticator-side refusal is NotAllowedError, so a page cannot probe).
    public var domException: String {
        switch self {
        case .canceled, .failed, .notHandled, .notInteractive, .biometryLockout, .timedOut: "NotAllowedError"
        case .matchedExcludedCredential: "InvalidStateError"
        case .securityError: "SecurityError"
        case .notSupported: "NotSupportedError"
        case .badInput, .faultNotApplicable: "TypeError"
        case .encodingError: "EncodingError"
        case .syntaxError: "SyntaxError"
        case .unknown: "UnknownError"
        }
    }

    /// The CTAP 2.1 status byte (§8.2) an authenticator returns; `nil` where the client decides alone.
    public var ctapStatus: UInt8? {
        switch self {
        case .canceled: 0x27  // CTAP2_ERR_OPERATION_DENIED
        case .failed: 0x3F  // CTAP2_ERR_UV_INVALID
        case .biometryLockout: 0x3C  // CTAP2_ERR_UV_BLOCKED
        case .timedOut: 0x2F  // CTAP2_ERR_USER_ACTION_TIMEOUT
        case .notHandled: 0x2E  // CTAP2_ERR_NO_CREDENTIALS
        case .matchedExcludedCredential: 0x19  // CTAP2_ERR_CREDENTIAL_EXCLUDED
        case .badInput: 0x02  // CTAP1_ERR_INVALID_PARAMETER
        case .unknown: 0x7F  // CTAP1_ERR_OTHER
        case .securityError, .notInteractive, .faultNotApplicable, .encodingError, .syntaxError, .notSupported: nil
        }
    }
}

extension AuthenticatorError {
    /// An OpenSSL failure inside a ceremony: nothing the caller did, so `unknown`.
    init(_ failure: OpenSSLFailure) {
        self.init(.unknown, "OpenSSL: \(failure)")
    }
}
