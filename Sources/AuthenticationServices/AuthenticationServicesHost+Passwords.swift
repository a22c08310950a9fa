import Foundation
import Session

/// A saved password that reached the app's text fields: the person picked it in the sheet of a
/// password request, or in the QuickType bar of the app's password field.
struct PasswordSignIn {
    let user: String
    let domain: String
    /// When, in milliseconds on the account's clock.
    let at: UInt64
}

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

    /// How long after a password sign-in a conditional registration of that account may proceed
    /// without UI (default 5 minutes, on the account's clock). Apple says "shortly after a user has
    /// signed in with a password" and publishes no number; 5 minutes is Chromium's threshold for
    /// the same upgrade (docs/ios.md).
    public var conditionalRegistrationWindow: Duration {
        get { state.conditionalRegistrationWindow }
        set { state.conditionalRegistrationWindow = newValue }
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

    /// The person fills the app's user name and password fields from the QuickType bar with the
    /// password saved for `user` at `domain` (password AutoFill, which needs no request of the
    /// app): what the fields now hold. It counts as a password sign-in for a conditional
    /// registration of that account. `notHandled` when no such password is saved, or when the
    /// app is not associated with `domain` (iOS offers it only the passwords of its own domains).
    public func autoFillPassword(user: String, domain: String) throws(SessionError) -> ASPasswordCredential {
        guard association(domain) == nil else {
            throw SessionError(.notHandled, "password AutoFill offers \(applicationIdentifier) only the passwords of its associated domains, not \(domain)'s")
        }
        guard let saved = savedPasswords(domain: domain).first(where: { $0.user == user }) else {
            throw SessionError(.notHandled, "no password is saved for \(user) at \(domain)")
        }
        signedIn(saved, at: domain)
        return saved
    }

    /// The saved passwords a password request offers: those of the domains the app is associated
    /// with (the association checked as for a passkey request), the domains in alphabetical order.
    func offeredPasswords() -> [(domain: String, credential: ASPasswordCredential)] {
        state.passwords.keys.filter { association($0) == nil }.sorted().flatMap { domain in savedPasswords(domain: domain).map { (domain, $0) } }
    }

    /// Remembers that `credential` reached the app's text fields now.
    func signedIn(_ credential: ASPasswordCredential, at domain: String) {
        state.passwordSignIns.append(PasswordSignIn(user: credential.user, domain: domain, at: session.now))
    }

    /// Whether the app saw a password sign-in of `user` within the conditional registration window.
    func signedInRecently(_ user: String) -> Bool {
        // In milliseconds, none when negative, and at most the clock's whole range.
        let (seconds, attoseconds) = conditionalRegistrationWindow.components
        let whole = UInt64(max(0, seconds)).multipliedReportingOverflow(by: 1000)
        let window = whole.overflow ? UInt64.max : whole.partialValue &+ UInt64(max(0, attoseconds) / 1_000_000_000_000_000)
        let now = session.now
        return state.passwordSignIns.contains { $0.user == user && $0.at <= now && now - $0.at <= window }
    }
}
