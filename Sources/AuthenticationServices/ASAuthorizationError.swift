import Foundation

/// The domain of authorization errors, as `NSError` reports it on Apple's platforms.
public let ASAuthorizationErrorDomain: String = "com.apple.AuthenticationServices.AuthorizationError"

/// Errors that can occur during authorization: Apple's `ASAuthorizationError`, the Swift face of an
/// `NSError` of ``ASAuthorizationErrorDomain``. A `catch ASAuthorizationError.canceled` matches
/// one by its code, as the bridged error does on iOS.
public struct ASAuthorizationError: Error, CustomNSError, Hashable, Sendable {
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
    /// `NSLocalizedFailureReason`: what iOS says about a `.failed` request ("Application with
    /// identifier … is not associated with domain …").
    let failureReason: String?

    public init(_ code: Code, failureReason: String? = nil) {
        self.code = code
        self.failureReason = failureReason
    }

    public static var errorDomain: String { ASAuthorizationErrorDomain }
    public var errorCode: Int { code.rawValue }
    public var errorUserInfo: [String: Any] {
        guard let failureReason else { return [:] }
        return [NSLocalizedFailureReasonErrorKey: failureReason]
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
