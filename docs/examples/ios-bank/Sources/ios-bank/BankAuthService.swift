import AuthenticationServices
import Foundation

/// The bank's authentication as the app does it: a password account, a passkey added after a
/// password sign-in (or from Settings), signing in with it by name or with no name, and the
/// transfer's re-verification. Every call to the bank is reported to `report` (a step's name and
/// what the bank answered).
@MainActor
final class BankAuthService {
    /// The domain the bank's passkeys are for, and the app's Associated Domains entitlement names
    /// (`webcredentials:yourbank.example`).
    static let relyingPartyIdentifier = "yourbank.example"

    let api: BankAPI
    private let coordinator = PasskeyCoordinator()
    let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: BankAuthService.relyingPartyIdentifier)
    let report: (String, String) -> Void
    /// The sign-in request the sign-in screen prepared for its passkey button.
    private var prepared: ASAuthorizationPlatformPublicKeyCredentialAssertionRequest?

    init(api: BankAPI, report: @escaping (String, String) -> Void) {
        self.api = api
        self.report = report
    }

    struct SignedIn: Decodable { let user: String; let offerPasskey: Bool? }

    /// Opens an account with a password (a name already taken is reported and left as it is).
    func signUp(username: String, password: String) async throws {
        do {
            report("signup", text(try await api.post("signup", ["username": username, "password": password])))
        } catch let refusal as BankRefusal where refusal.status == 409 {
            report("signup", "taken: \(refusal.body)")
        }
    }

    /// Signs in with the password; answers whether the bank offers to add a passkey (it does so
    /// until the account has one, at most three times).
    func signIn(username: String, password: String) async throws -> Bool {
        let answer = try await api.post("password/login", ["username": username, "password": password])
        report("password-login", text(answer))
        return try JSONDecoder().decode(SignedIn.self, from: answer).offerPasskey ?? false
    }

    /// Adds a passkey to the signed-in account: the bank's options, the system's sheet, the bank
    /// verifying what it made. The account's passkeys are excluded, so a device that holds one
    /// already answers `.matchedExcludedCredential`.
    @discardableResult
    func addPasskey() async throws -> CreatedPasskey {
        let begun = try JSONDecoder().decode(Begun<CreationOptionsJSON>.self, from: try await api.post("register/begin")).publicKey
        report("register-begin", "rp=\(begun.rp.id) user=\(begun.user.name) excluded=\(begun.excludeCredentials?.count ?? 0)")
        let passkey = try await coordinator.register(try registrationRequest(begun, style: .standard))
        report("passkey", "created \(passkey.credentialID.base64URLEncodedString()) \(passkey.attachment)")
        report("register-finish", text(try await api.post("register/finish", Finish(credential: RegistrationResponseJSON(passkey)))))
        return passkey
    }

    /// iOS 18's automatic passkey upgrade, right after a password sign-in: the bank's upgrade
    /// options (user verification preferred), a registration request in the conditional style,
    /// which iOS performs without showing anything; the passkey, made with neither UP nor UV, goes
    /// to the bank's upgrade finish, which does not require them. Without a recent password
    /// sign-in through iCloud Keychain iOS makes nothing and answers `.canceled`, showing nothing.
    @discardableResult
    func upgradeAutomatically() async throws -> CreatedPasskey {
        let begun = try JSONDecoder().decode(Begun<CreationOptionsJSON>.self, from: try await api.post("upgrade/begin")).publicKey
        report("upgrade-begin", "rp=\(begun.rp.id) user=\(begun.user.name) userVerification=\(begun.authenticatorSelection?.userVerification ?? "-")")
        let passkey = try await coordinator.register(try registrationRequest(begun, style: .conditional))
        report("passkey", "created \(passkey.credentialID.base64URLEncodedString()) \(passkey.attachment)")
        report("upgrade-finish", text(try await api.post("upgrade/finish", Finish(credential: RegistrationResponseJSON(passkey)))))
        return passkey
    }

    private func registrationRequest(_ begun: CreationOptionsJSON, style: ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest.RequestStyle)
        throws -> ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest {
        guard let challenge = Data(base64URLEncoded: begun.challenge), let userID = Data(base64URLEncoded: begun.user.id) else {
            throw UnreadableAnswer(what: "the bank's options are not base64url")
        }
        let request = provider.createCredentialRegistrationRequest(challenge: challenge, name: begun.user.name, userID: userID, requestStyle: style)
        request.displayName = begun.user.displayName
        if let preference = begun.authenticatorSelection?.userVerification {
            request.userVerificationPreference = ASAuthorizationPublicKeyCredentialUserVerificationPreference(rawValue: preference)
        }
        request.excludedCredentials = (begun.excludeCredentials ?? []).compactMap { Data(base64URLEncoded: $0.id) }
            .map { ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: $0) }
        return request
    }

    /// The person said no to the offer: the bank asks less often.
    func declineUpgrade() async throws {
        report("upgrade-decline", text(try await api.post("upgrade/decline")))
    }

    func signOut() async throws {
        report("logout", text(try await api.post("logout")))
    }

    /// Signs in with a passkey: of `username`'s, the bank listing them, or with no name (a
    /// discoverable sign-in: the passkey's `userID` tells the bank who it is). `immediatelyAvailableOnly`
    /// asks for a passkey on this device and shows no sheet without one. `tamper` may change the
    /// signature before it is sent (to see the bank refuse it).
    @discardableResult
    func signInWithPasskey(username: String?, immediatelyAvailableOnly: Bool = false,
                           tamper: (inout PasskeySignature) -> Void = { _ in }) async throws -> PasskeySignature {
        var signed = try await coordinator.signIn(try await signInRequest(username: username), immediatelyAvailableOnly: immediatelyAvailableOnly)
        tamper(&signed)
        try await finishSignIn(signed)
        return signed
    }

    /// The bank's sign-in options, of `username`'s passkeys or, with no name, discoverable: the
    /// request that asks for one of them.
    func signInRequest(username: String?) async throws -> ASAuthorizationPlatformPublicKeyCredentialAssertionRequest {
        let body = username.map { ["username": $0] } ?? [:]
        let begun = try JSONDecoder().decode(Begun<RequestOptionsJSON>.self, from: try await api.post("login/begin", body)).publicKey
        report("login-begin", "allowed=\(begun.allowCredentials?.count ?? 0)")
        return try assertionRequest(begun, allowing: begun.allowCredentials ?? [])
    }

    /// Sends a passkey's sign-in to the bank, which signs the person in.
    func finishSignIn(_ signed: PasskeySignature) async throws {
        report("passkey", "signed \(signed.credentialID.base64URLEncodedString()) \(signed.attachment) user=\(signed.userID?.base64URLEncodedString() ?? "-")")
        report("login-finish", text(try await api.post("login/finish", Finish(credential: AuthenticationResponseJSON(signed)))))
    }

    /// The sign-in screen's "Sign in" button, with no name typed: one sheet of the passkeys on the
    /// phone and the passwords iCloud Keychain saved for the bank's domain (an assertion request
    /// and an `ASAuthorizationPasswordRequest` in one controller, as Apple's sample has it); what
    /// the person picks signs them in. Answers whether the bank then offers a passkey.
    func signInFromSheet() async throws -> Bool {
        let request = try await signInRequest(username: nil)
        coordinator.start([request, ASAuthorizationPasswordProvider().createRequest()])
        switch try await coordinator.answer() {
        case .password(let user, let password):
            report("password", "picked user=\(user)")
            return try await signIn(username: user, password: password)
        case .signed(let signed):
            try await finishSignIn(signed)
            return false
        case .created:
            throw PasskeyFailure.notExpected
        }
    }

    /// The sign-in screen shows with `username` typed: it fetches the options its passkey button
    /// will ask with.
    func prepareSignIn(username: String) async throws {
        prepared = try await signInRequest(username: username)
    }

    /// The passkey button's action: the prepared request, performed at once through a coordinator
    /// of its own, whose answer `completeSignIn` awaits.
    func passkeyButtonTapped() -> PasskeyCoordinator {
        guard let prepared else { preconditionFailure("the sign-in screen prepares its request before its button shows") }
        let tap = PasskeyCoordinator()
        tap.start([prepared])
        return tap
    }

    /// What the button's request answered, sent to the bank.
    func completeSignIn(_ tap: PasskeyCoordinator) async throws {
        try await finishSignIn(try await tap.signature())
    }

    /// A transfer the bank approves only with a passkey verified again (user verification
    /// required), as the guide's re-verification for a sensitive operation: the request names no
    /// passkey, the device offers the account's.
    func transfer(amount: Int) async throws {
        let begun = try JSONDecoder().decode(Begun<RequestOptionsJSON>.self, from: try await api.post("transfer/begin", ["amount": amount])).publicKey
        report("transfer-begin", "amount=\(amount) userVerification=\(begun.userVerification ?? "-")")
        let signed = try await coordinator.signIn(try assertionRequest(begun, allowing: []))
        report("passkey", "signed \(signed.credentialID.base64URLEncodedString()) \(signed.attachment) user=\(signed.userID?.base64URLEncodedString() ?? "-")")
        report("transfer-finish", text(try await api.post("transfer/finish", Finish(credential: AuthenticationResponseJSON(signed)))))
    }

    /// The account's transfer history.
    func transfers() async throws {
        report("transfers", text(try await api.get("transfers")))
    }

    private func assertionRequest(_ begun: RequestOptionsJSON, allowing allowed: [CredentialDescriptorJSON]) throws
        -> ASAuthorizationPlatformPublicKeyCredentialAssertionRequest {
        guard let challenge = Data(base64URLEncoded: begun.challenge) else {
            throw UnreadableAnswer(what: "the bank's challenge is not base64url")
        }
        let request = provider.createCredentialAssertionRequest(challenge: challenge)
        request.allowedCredentials = allowed.compactMap { Data(base64URLEncoded: $0.id) }
            .map { ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: $0) }
        if let preference = begun.userVerification {
            request.userVerificationPreference = ASAuthorizationPublicKeyCredentialUserVerificationPreference(rawValue: preference)
        }
        return request
    }

    func text(_ data: Data) -> String {
        String(decoding: data, as: UTF8.self)
    }
}
