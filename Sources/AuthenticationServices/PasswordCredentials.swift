import Foundation

/// Makes requests for the passwords saved for the app's associated domains (Apple's
/// `ASAuthorizationPasswordProvider`: "a mechanism for generating requests to perform keychain
/// credential sharing"). The passwords are the host's (``AuthenticationServicesHost/savePassword(_:user:domain:)``),
/// as iCloud Keychain's are the iPhone's.
public final class ASAuthorizationPasswordProvider: NSObject, ASAuthorizationProvider {
    override public init() {}

    /// A request for one of the saved passwords, which the person picks in the sheet.
    public func createRequest() -> ASAuthorizationPasswordRequest {
        ASAuthorizationPasswordRequest(provider: self)
    }
}

/// A request for a password saved for one of the app's associated domains. Performed modally
/// only: iOS refuses it in an AutoFill-assisted flow ("… does not support AutoFill assistance.")
/// and in a conditional one.
public final class ASAuthorizationPasswordRequest: ASAuthorizationRequest {
    init(provider: ASAuthorizationPasswordProvider) {
        super.init(provider: provider)
    }
}

/// A saved password the person picked: what the app sends its server in place of what the
/// person would have typed.
public final class ASPasswordCredential: NSObject, ASAuthorizationCredential {
    public let user: String
    public let password: String

    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }
}
