import KeyVault
import Keychain
import VirtualAuthenticator

/// The one user-facing error table (docs/errors.md), as data: every failure a front end reports
/// (the command line, a scenario's outcome, later a server) has one of these names, and each name
/// one exit code, DOMException, Apple `ASAuthorizationError` code and CTAP2 status. The lower
/// layers' errors are mapped to it by type, with exhaustive switches: a new code of theirs does
/// not compile until it has a row here.
public struct SessionError: Error, Sendable, CustomStringConvertible {
    public enum Name: String, CaseIterable, Sendable {
        case canceled, failed, invalidResponse, notHandled, unknown, notInteractive, matchedExcludedCredential
        case biometryLockout, timedOut, securityError, notSupported, encodingError, syntaxError, badInput, usage
        case vaultLocked, vaultCorrupted, vaultNotFound, vaultExists, vaultBusy, vaultInsecure, scenarioFailed, passkeysNotSupported, ioError
        case vaultTooNew, storeUnavailable, auditFindings, rpUnusable
    }

    public let name: Name
    public let message: String

    public init(_ name: Name, _ message: String) {
        self.name = name
        self.message = message
    }

    /// A device's error, by its code.
    public init(_ error: DeviceError) {
        self.init(Self.name(of: error.code), error.message)
    }

    /// A ceremony's error, as the authenticator and client named it, or a port's failure it
    /// carries, as the device names it.
    public init(_ error: AuthenticatorError) {
        self.init(DeviceError(error))
    }

    /// The vault's error, by its kind.
    package init(_ error: VaultError) {
        let name: Name = switch error.kind {
        case .notFound: .vaultNotFound
        case .exists: .vaultExists
        case .locked: .vaultLocked
        case .corrupted: .vaultCorrupted
        case .tooNew: .vaultTooNew
        case .io: .ioError
        case .busy: .vaultBusy
        case .unsafe: .vaultInsecure
        case .invalid: .badInput
        case .inconsistent: .unknown  // an internal invariant broken: never the caller's input
        }
        self.init(name, error.message)
    }

    /// The row of a device error's code.
    public static func name(of code: DeviceError.Code) -> Name {
        switch code {
        case .authenticator(let code): Name(code)
        case .vaultNotFound: .vaultNotFound
        case .vaultExists: .vaultExists
        case .vaultLocked: .vaultLocked
        case .vaultCorrupted: .vaultCorrupted
        case .vaultTooNew: .vaultTooNew
        case .vaultBusy: .vaultBusy
        case .vaultInsecure: .vaultInsecure
        case .storage: .ioError
        case .storeUnavailable: .storeUnavailable
        case .invalidArgument: .badInput
        case .noSuchCredential: .notHandled
        case .noSuchDevice: .usage  // a --device, --via or approver naming no device: the caller's words
        case .passkeysNotSupported: .passkeysNotSupported
        }
    }

    public var description: String { "\(name.rawValue): \(message)" }
}

extension SessionError.Name {
    /// The row of an authenticator code: the same name, but for a deliberate fault the request
    /// cannot produce, which is a misuse of a test control (`usage`).
    public init(_ code: AuthenticatorError.Code) {
        self = switch code {
        case .canceled: .canceled
        case .failed: .failed
        case .notHandled: .notHandled
        case .notInteractive: .notInteractive
        case .matchedExcludedCredential: .matchedExcludedCredential
        case .biometryLockout: .biometryLockout
        case .timedOut: .timedOut
        case .securityError: .securityError
        case .notSupported: .notSupported
        case .badInput: .badInput
        case .encodingError: .encodingError
        case .syntaxError: .syntaxError
        case .faultNotApplicable: .usage
        case .unknown: .unknown
        }
    }

    /// The authenticator's code of the same name, whose DOMException and CTAP status this name shares.
    private var authenticatorCode: AuthenticatorError.Code? {
        switch self {
        case .canceled: .canceled
        case .failed: .failed
        case .notHandled: .notHandled
        case .notInteractive: .notInteractive
        case .matchedExcludedCredential: .matchedExcludedCredential
        case .biometryLockout: .biometryLockout
        case .timedOut: .timedOut
        case .securityError: .securityError
        case .notSupported: .notSupported
        case .badInput: .badInput
        case .encodingError: .encodingError
        case .syntaxError: .syntaxError
        case .unknown: .unknown
        case .invalidResponse, .usage, .vaultLocked, .vaultCorrupted, .vaultNotFound, .vaultExists, .vaultBusy, .vaultInsecure,
             .scenarioFailed, .passkeysNotSupported, .ioError, .vaultTooNew, .storeUnavailable, .auditFindings, .rpUnusable: nil
        }
    }

    /// Whether a ceremony that ended so had asked the person — they canceled, typed a wrong PIN,
    /// let the prompt time out, were locked out, or could type no PIN — rather than failing before
    /// any prompt (a SecurityError, a TypeError, an excluded passkey, …): what a front end that
    /// queues what the person does uses up.
    public var askedThePerson: Bool {
        switch self {
        case .canceled, .failed, .timedOut, .biometryLockout, .notInteractive: true
        case .invalidResponse, .notHandled, .unknown, .matchedExcludedCredential, .securityError, .notSupported, .encodingError, .syntaxError,
             .badInput, .usage, .vaultLocked, .vaultCorrupted, .vaultNotFound, .vaultExists, .vaultBusy, .vaultInsecure, .scenarioFailed,
             .passkeysNotSupported, .ioError, .vaultTooNew, .storeUnavailable, .auditFindings, .rpUnusable: false
        }
    }

    /// The exit status: sysexits where one fits; 10–30 for WebAuthn outcomes and the vault.
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
        case .vaultBusy: 24
        case .vaultInsecure: 25
        case .scenarioFailed: 26
        case .encodingError: 27
        case .passkeysNotSupported: 28
        case .syntaxError: 29
        case .vaultTooNew: 30
        case .storeUnavailable: 31
        case .auditFindings: 32
        case .rpUnusable: 33
        case .usage: 64  // EX_USAGE
        case .badInput: 65  // EX_DATAERR
        case .unknown: 70  // EX_SOFTWARE
        case .ioError: 74  // EX_IOERR
        }
    }

    /// What the name means, in a line (docs/errors.md has the whole story).
    public var summary: String {
        switch self {
        case .canceled: "the user dismissed the prompt, or a passphrase or PIN prompt was interrupted"
        case .failed: "the biometric PIN did not match (counted toward lockout)"
        case .invalidResponse: "reserved: authctl sends a malformed response only when --fault asks for one"
        case .notHandled: "no passkey or no eligible authenticator for the request"
        case .notInteractive: "a PIN or passphrase is needed but no file, variable or terminal gives it"
        case .matchedExcludedCredential: "a passkey in excludeCredentials is already in the vault for the RP"
        case .securityError: "the origin or RP ID is not allowed (not https, an IP address, an RP ID that is not its suffix)"
        case .notSupported: "the client refuses the options (no public-key credential type, an extension used where it cannot be)"
        case .biometryLockout: "too many wrong PINs: user verification fails until biometry unlock"
        case .timedOut: "the user did not answer, or the call stayed pending, within the options' timeout"
        case .vaultLocked: "the passphrase does not open the vault"
        case .vaultCorrupted: "a vault file was damaged or edited"
        case .vaultTooNew: "the vault was written by a newer authctl, in a format this one does not know"
        case .vaultNotFound: "no vault at the path"
        case .vaultExists: "init where a vault already is"
        case .vaultBusy: "another authctl process held the vault for longer than --wait seconds"
        case .vaultInsecure: "the vault directory or a file in it belongs to another user, or others can write the directory"
        case .scenarioFailed: "an expectation of a scenario was not met"
        case .encodingError: "a base64url member of the options JSON is not unpadded base64url"
        case .passkeysNotSupported: "the device has no passkey support (device unsupported)"
        case .syntaxError: "a prf evalByCredential key or an appid the browser refuses as a SyntaxError"
        case .usage: "an unknown command or option, or an option value that is missing, repeated or not among its choices"
        case .badInput: "input that cannot be used: malformed options JSON, a missing member, an unreadable file, a bad secret"
        case .unknown: "an internal failure, or OpenSSL without a usable provider"
        case .ioError: "the operating system refused a file operation, or the response could not be written"
        case .storeUnavailable: "the account store cannot be reached or used now (a server that does not answer, a directory that is not private)"
        case .auditFindings: "audit: the RP accepted a response it must refuse (or, with --fail-on, answered a case with a server error)"
        case .rpUnusable: "audit: the RP could not be audited (unreachable, an answer too large, slow or not as the profile says, a baseline ceremony refused)"
        }
    }

    /// `ASAuthorizationError.Code` raw value (the names the seed documents use); `nil` where Apple
    /// has no counterpart.
    public var appleCode: Int? {
        switch self {
        case .unknown: 1000
        case .canceled: 1001
        case .invalidResponse: 1002
        case .notHandled: 1003
        case .failed: 1004
        case .notInteractive: 1005
        case .matchedExcludedCredential: 1006
        case .biometryLockout, .timedOut, .securityError, .notSupported, .encodingError, .syntaxError, .badInput, .usage, .vaultLocked,
             .vaultCorrupted, .vaultNotFound, .vaultExists, .vaultBusy, .vaultInsecure, .scenarioFailed, .passkeysNotSupported, .ioError,
             .vaultTooNew, .storeUnavailable, .auditFindings, .rpUnusable: nil
        }
    }

    /// The DOMException a browser rejects with.
    public var domException: String {
        if let authenticatorCode { return authenticatorCode.domException }
        // A browser without WebAuthn: navigator.credentials knows no publicKey credential type.
        if self == .passkeysNotSupported { return "NotSupportedError" }
        return self == .usage ? "TypeError" : "UnknownError"
    }

    /// The CTAP 2.1 status an authenticator would return; `nil` where the protocol has none.
    public var ctapStatus: UInt8? {
        switch self {
        case .canceled, .failed, .notHandled, .notInteractive, .matchedExcludedCredential, .biometryLockout, .timedOut, .securityError,
             .notSupported, .badInput, .encodingError, .syntaxError, .unknown: authenticatorCode?.ctapStatus
        case .invalidResponse: 0x12  // CTAP2_ERR_INVALID_CBOR
        case .usage, .scenarioFailed, .passkeysNotSupported, .auditFindings, .rpUnusable: nil
        // CTAP1_ERR_OTHER: the vault and the system are not the protocol's business.
        case .vaultLocked, .vaultCorrupted, .vaultNotFound, .vaultExists, .vaultBusy, .vaultInsecure, .ioError, .vaultTooNew,
             .storeUnavailable: 0x7F
        }
    }
}
