/// `CredentialMediationRequirement` (Credential Management Level 1 §2.3.2, WebAuthn L3 §5.1.3 and
/// §5.1.4): how the browser involves the user in a call.
public enum Mediation: String, Sendable, CaseIterable {
    /// No user interaction at all: WebAuthn always needs the user, so it never succeeds.
    case silent
    /// The default: a modal prompt.
    case optional
    /// A modal prompt, even where the browser could skip it.
    case required
    /// Sign-in: the passkeys are offered in the page's autofill, and the call stays pending until
    /// the user picks one — no error when there is none. Create: a passkey made without a prompt
    /// (UP=0) after a recent password sign-in, for automatic upgrades.
    case conditional
    /// Sign-in (Level 3): a local passkey or an immediate NotAllowedError, never a cross-device
    /// (hybrid) flow.
    case immediate
}
