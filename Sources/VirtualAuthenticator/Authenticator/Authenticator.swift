/// The platform authenticator: CTAP 2.1 authenticatorMakeCredential and authenticatorGetAssertion
/// over injected ports (store, user, randomness, clock). See MakeCredential.swift and
/// GetAssertion.swift for the two commands. The store and the user agree on what a verification
/// proves (`Verification`), which is how a passkey made with user verification stays out of reach
/// of a ceremony that did not verify.
public struct Authenticator<Store: CredentialStore, User: UserInteraction> where Store.Verification == User.Verification {
    public var configuration: AuthenticatorConfiguration
    public let store: Store
    public let user: User
    public let random: RandomSource
    public let clock: WallClock

    public init(configuration: AuthenticatorConfiguration = AuthenticatorConfiguration(), store: Store,
                user: User, random: RandomSource = .live, clock: WallClock = .live) {
        self.configuration = configuration
        self.store = store
        self.user = user
        self.random = random
        self.clock = clock
    }

    /// An authenticator that cannot verify the user is not eligible for a request that needs it:
    /// the browser finds none and rejects with NotAllowedError (WebAuthn L3 §5.1.3 step 20).
    func requireVerificationPossible(_ verify: Bool) throws(AuthenticatorError) {
        guard !verify || user.canVerify else {
            throw AuthenticatorError(.notHandled, "user verification is required, but no biometric PIN is enrolled")
        }
    }
}
