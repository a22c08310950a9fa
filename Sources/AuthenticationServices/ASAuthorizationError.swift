import Foundation

/// The domain of authorization errors, as `NSError` reports it on Apple's platforms.
public let ASAuthorizationErrorDomain: String = "com.apple.AuthenticationServices.AuthorizationError"

/// Errors that can occur during authorization: Apple's `ASAuthorizationError`, the Swift face of an
/// `NSError` of ``ASAuthorizationErrorDomain``. A `catch ASAuthorizationError.canceled` matches
/// one by its code, as the bridged error does on iOS.
///
/// `@unchecked Sendable`: `userInfo` is a constant dictionary of the plain values iOS puts there
/// (strings), never mutated after the error is made.
public struct ASAuthorizationError: Error, CustomNSError, Hashable, @unchecked Sendable {
    /// The codes, with Apple's raw values (ASAuthorizationError.h).
    public enum Code: Int, Sendable, Hashable {
        case unknown = 1000
        case canceled = 1001
        case invalidResponse = 1002
        case notHandled = 1003
        case failed = 1004
        case notInteractive = 1005
        case matchedExcludedCredential = 1006
        case credentialImport = 1007
        case credentialExport = 1008
        case preferSignInWithApple = 1009
        case deviceNotConfiguredForPasskeyCreation = 1010

        /// `catch ASAuthorizationError.canceled`: an error matches a code when it is an
        /// `ASAuthorizationError` of that code.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? ASAuthorizationError)?.code == code
        }
    }

    public let code: Code
    /// The error's user-info dictionary, as iOS fills it: `NSLocalizedFailureReason` for a
    /// `.failed` request ("Application with identifier … is not associated with domain …"),
    /// nothing for `.canceled`.
    public let userInfo: [String: Any]

    /// Apple's initializer of a bridged error (`_BridgedStoredNSError`).
    public init(_ code: Code, userInfo: [String: Any] = [:]) {
        self.code = code
        self.userInfo = userInfo
    }

    /// An error whose `NSLocalizedFailureReason` is `failureReason`, as iOS reports a `.failed`
    /// request's cause.
    init(_ code: Code, failureReason: String) {
        self.init(code, userInfo: [NSLocalizedFailureReasonErrorKey: failureReason])
    }

    public static var errorDomain: String { ASAuthorizationErrorDomain }
    public var errorCode: Int { code.rawValue }

    /// What `error as NSError` carries: ``userInfo``, and `NSLocalizedDescription` worded as
    /// Foundation on iOS words a description it makes up — Foundation on Linux words its own
    /// "The operation could not be completed." and consults no user-info value provider, so
    /// without the key `localizedDescription` would not read as on iOS.
    public var errorUserInfo: [String: Any] {
        var info = userInfo
        if info[NSLocalizedDescriptionKey] == nil { info[NSLocalizedDescriptionKey] = Self.localizedDescription(code, userInfo) }
        return info
    }

    /// Foundation's description of an error with no description of its own, as iOS shows it:
    /// "The operation couldn’t be completed." and the failure reason, or, without one, the
    /// domain and code in brackets.
    static func localizedDescription(_ code: Code, _ userInfo: [String: Any]) -> String {
        let reason = (userInfo[NSLocalizedFailureReasonErrorKey] as? String) ?? "(\(ASAuthorizationErrorDomain) error \(code.rawValue).)"
        return "The operation couldn\u{2019}t be completed. " + reason
    }

    /// Errors are equal as their `NSError`s are: the same code and the same user info.
    public static func == (lhs: ASAuthorizationError, rhs: ASAuthorizationError) -> Bool {
        lhs.code == rhs.code && NSDictionary(dictionary: lhs.userInfo).isEqual(to: rhs.userInfo)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
    }

    public static var unknown: Code { .unknown }
    public static var canceled: Code { .canceled }
    public static var invalidResponse: Code { .invalidResponse }
    public static var notHandled: Code { .notHandled }
    public static var failed: Code { .failed }
    public static var notInteractive: Code { .notInteractive }
    public static var matchedExcludedCredential: Code { .matchedExcludedCredential }
    public static var credentialImport: Code { .credentialImport }
    public static var credentialExport: Code { .credentialExport }
    public static var preferSignInWithApple: Code { .preferSignInWithApple }
    public static var deviceNotConfiguredForPasskeyCreation: Code { .deviceNotConfiguredForPasskeyCreation }
}
