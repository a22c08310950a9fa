/// `CredentialMediationRequirement` (Credential Management Level 1 §2.3.2, WebAuthn L3 §5.1.3 and
/// §5.1.4): how the browser involves the user in a call. Any other value (the retired draft's
/// `immediate` too) is not one of the enum's and a TypeError, as in Chromium 156.
public enum Mediation: String, Sendable, CaseIterable {
    /// No user interaction if the browser can help it. A passkey ceremony always involves the
    /// user, and Chromium 156 treats it as `optional`, in a sign-in and in a create alike.
    case silent
    /// The default: a modal prompt.
    case optional
    /// A modal prompt, even where the browser could skip it.
    case required
    /// Sign-in: the passkeys are offered in the page's autofill (or, with ``UIMode/passive``, in
    /// the browser's ambient sign-in UI), and the call stays pending until the user picks one — no
    /// error when there is none. Create: a passkey made without a prompt (UP=0) after a recent
    /// password sign-in, for automatic upgrades; without one it stays pending too.
    case conditional
}

/// `CredentialUiModeRequirement`, the `uiMode` member of CredentialRequestOptions (Chromium 156,
/// capabilities `immediateGet` and `ambientGet`): how a sign-in is shown. Create has no such
/// member.
public enum UIMode: String, Sendable, CaseIterable {
    /// Immediate sign-in: a local passkey at once, or NotAllowedError at once — never the
    /// cross-device (hybrid) flow, never an allow list, only with a user activation, and (in a
    /// page) at most two requests per five seconds.
    case immediate
    /// Ambient sign-in, with `mediation: "conditional"`: the passkeys are offered outside the page's
    /// form fields; otherwise as a conditional request.
    case passive
}
