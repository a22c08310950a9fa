import Foundation
import KeyVault
import VirtualAuthenticator

/// How the simulated person at the device behaves in one ceremony: what they do at the prompt,
/// which account they pick, where their PIN comes from, and how a timeout passes.
public struct UserPolicy {
    public var action: UserAction
    public var account: AccountChoice
    /// The PIN the user gives when asked to verify (only then is it called). Throw
    /// `notInteractive` when there is no way to get one.
    public var pin: (UserPrompt) throws(AuthenticatorError) -> SecureBytes
    /// How the time until a prompt's timeout passes: slept through by default; a test or a
    /// scenario on a virtual clock passes it at once.
    public var wait: (Duration) -> Void

    public init(action: UserAction = .approve, account: AccountChoice = .newest,
                pin: @escaping (UserPrompt) throws(AuthenticatorError) -> SecureBytes = UserPolicy.noPIN,
                wait: @escaping (Duration) -> Void = UserPolicy.sleep) {
        self.action = action
        self.account = account
        self.pin = pin
        self.wait = wait
    }

    /// A user who knows `pin`.
    public init(action: UserAction = .approve, account: AccountChoice = .newest, pin: SecureBytes,
                wait: @escaping (Duration) -> Void = UserPolicy.sleep) {
        self.init(action: action, account: account, pin: { _ throws(AuthenticatorError) in pin }, wait: wait)
    }

    /// No PIN anywhere: verification fails with `notInteractive`.
    public static func noPIN(_ prompt: UserPrompt) throws(AuthenticatorError) -> SecureBytes {
        throw AuthenticatorError(.notInteractive, "user verification for \(prompt.rpId) needs the biometric PIN, and none was given")
    }

    /// Sleeps for `duration` in real time.
    public static func sleep(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) / 1e18)
    }
}
