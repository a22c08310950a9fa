import Foundation
import Session

extension AuthenticationServicesHost {
    /// What the person picks in a sheet that offers passkeys and saved passwords together (a
    /// controller with an assertion request and an `ASAuthorizationPasswordRequest`).
    public enum SheetPick: Sendable, Equatable {
        /// A passkey, the one ``person``'s account choice names; the first saved password when the
        /// sheet offers no passkey.
        case passkey
        /// The saved password of `user` (`nil`: the first the sheet offers); a passkey when the sheet
        /// offers no such password.
        case password(user: String? = nil)
    }

    /// What the person picks in the next sheets that offer passkeys and passwords (default: a passkey).
    public var sheetPick: SheetPick {
        get { state.sheetPick }
        set { state.sheetPick = newValue }
    }

    /// Saves `password` for `user` at `domain`, as iCloud Keychain holds it on this phone (a
    /// password saved before for the same user and domain is replaced).
    public func savePassword(_ password: String, user: String, domain: String) {
        var saved = state.passwords[domain, default: []].filter { $0.user != user }
        saved.append(ASPasswordCredential(user: user, password: password))
        state.passwords[domain] = saved
    }

    /// The passwords saved for `domain`, in the order they were saved.
    public func savedPasswords(domain: String) -> [ASPasswordCredential] {
        state.passwords[domain, default: []]
    }

    /// The saved passwords a password request offers: those of the app's associated domains, the
    /// domains in alphabetical order.
    func offeredPasswords() -> [(domain: String, credential: ASPasswordCredential)] {
        associatedDomains.sorted().flatMap { domain in savedPasswords(domain: domain).map { (domain, $0) } }
    }
}
