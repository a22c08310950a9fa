import Foundation

/// What the phone holds besides its passkeys and remembers between requests. Not Apple API.
@MainActor
final class HostState {
    /// iCloud Keychain's saved passwords, by domain, in the order they were saved.
    var passwords = [String: [ASPasswordCredential]]()
    /// The password sign-ins the app saw on this phone, oldest first.
    var passwordSignIns = [PasswordSignIn]()
    var sheetPick = AuthenticationServicesHost.SheetPick.passkey
    var conditionalRegistrationWindow = Duration.seconds(300)
    /// The AutoFill-assisted request whose passkeys the QuickType bar offers now.
    var autoFill: AutoFillFlow?
}
