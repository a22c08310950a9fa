import Foundation

/// Makes requests for the passwords saved for the app's associated domains (Apple's
/// `ASAuthorizationPasswordProvider`: "a mechanism for generating requests to perform keychain
/// credential sharing"). The passwords are the host's (``AuthenticationServicesHost/savePassword(_:user:domain:)``),
/// as iCloud Keychain's are the iPhone's. `@unchecked Sendable`, as Apple declares it (iOS 16.4):
/// it holds nothing.
public final class ASAuthorizationPasswordProvider: NSObject, ASAuthorizationProvider, @unchecked Sendable {
    override public init() {}

    /// A request for one of the saved passwords, which the person picks in the sheet.
    public func createRequest() -> ASAuthorizationPasswordRequest {
        ASAuthorizationPasswordRequest(provider: self)
    }
}

/// A request for a password saved for one of the app's associated domains. Performed modally
/// only: iOS refuses it in an AutoFill-assisted flow ("… does not support AutoFill assistance.")
/// and in a conditional one.
public final class ASAuthorizationPasswordRequest: ASAuthorizationRequest, @unchecked Sendable {
    init(provider: ASAuthorizationPasswordProvider) {
        super.init(provider: provider)
    }
}

/// A saved password the person picked: what the app sends its server in place of what the
/// person would have typed. Its members are constants: `@unchecked Sendable`, as Apple declares it
/// (iOS 16.4).
public final class ASPasswordCredential: NSObject, ASAuthorizationCredential, @unchecked Sendable {
    public let user: String
    public let password: String

    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }
}
