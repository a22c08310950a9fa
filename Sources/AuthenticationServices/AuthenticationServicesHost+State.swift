import Foundation

/// What the phone holds besides its passkeys and remembers between requests. Not Apple API.
@MainActor
final class HostState {
    /// iCloud Keychain's saved passwords, by domain, in the order they were saved.
    var passwords = [String: [ASPasswordCredential]]()
    var sheetPick = AuthenticationServicesHost.SheetPick.passkey
    /// The AutoFill-assisted request whose passkeys the QuickType bar offers now.
    var autoFill: AutoFillFlow?
}
