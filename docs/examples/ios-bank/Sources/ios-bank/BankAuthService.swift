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

    private let api: BankAPI
    private let coordinator = PasskeyCoordinator()
    private let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: BankAuthService.relyingPartyIdentifier)
    private let report: (String, String) -> Void

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
        guard let challenge = Data(base64URLEncoded: begun.challenge), let userID = Data(base64URLEncoded: begun.user.id) else {
            throw UnreadableAnswer(what: "the bank's options are not base64url")
        }
        let request = provider.createCredentialRegistrationRequest(challenge: challenge, name: begun.user.name, userID: userID)
        request.displayName = begun.user.displayName
        if let preference = begun.authenticatorSelection?.userVerification {
            request.userVerificationPreference = ASAuthorizationPublicKeyCredentialUserVerificationPreference(rawValue: preference)
        }
        request.excludedCredentials = (begun.excludeCredentials ?? []).compactMap { Data(base64URLEncoded: $0.id) }
            .map { ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: $0) }

        let passkey = try await coordinator.register(request)
        report("passkey", "created \(passkey.credentialID.base64URLEncodedString()) \(passkey.attachment)")
        report("register-finish", text(try await api.post("register/finish", Finish(credential: RegistrationResponseJSON(passkey)))))
        return passkey
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
        let body = username.map { ["username": $0] } ?? [:]
        let begun = try JSONDecoder().decode(Begun<RequestOptionsJSON>.self, from: try await api.post("login/begin", body)).publicKey
        report("login-begin", "allowed=\(begun.allowCredentials?.count ?? 0)")
        let request = try assertionRequest(begun, allowing: begun.allowCredentials ?? [])
        var signed = try await coordinator.signIn(request, immediatelyAvailableOnly: immediatelyAvailableOnly)
        report("passkey", "signed \(signed.credentialID.base64URLEncodedString()) \(signed.attachment) user=\(signed.userID?.base64URLEncodedString() ?? "-")")
        tamper(&signed)
        report("login-finish", text(try await api.post("login/finish", Finish(credential: AuthenticationResponseJSON(signed)))))
        return signed
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

    private func text(_ data: Data) -> String {
        String(decoding: data, as: UTF8.self)
    }
}
