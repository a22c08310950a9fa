import AuthenticationServices
import Foundation

/// The bank's authentication as the app does it: a password account, the offer to add a passkey
/// after a password sign-in, and signing in with the passkey. Every step is reported to `report`
/// (a step's name and what the bank answered).
@MainActor
final class BankAuthService {
    /// The domain the app's Associated Domains entitlement names (`webcredentials:yourbank.example`).
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

    /// Opens an account with a password; an account that exists already is signed in to with it.
    /// Answers whether the bank offers to add a passkey (it does so at most three times).
    func signUpOrSignIn(username: String, password: String) async throws -> Bool {
        let credentials = ["username": username, "password": password]
        do {
            report("signup", String(decoding: try await api.post("signup", credentials), as: UTF8.self))
        } catch let refusal as BankRefusal where refusal.status == 409 {
            report("signup", "taken: \(refusal.body)")
        }
        let answer = try await api.post("password/login", credentials)
        report("password-login", String(decoding: answer, as: UTF8.self))
        return try JSONDecoder().decode(SignedIn.self, from: answer).offerPasskey ?? false
    }

    /// The upgrade from a password to a passkey, offered after a password sign-in. Dismissing the
    /// sheet declines the offer, which the bank counts so that it asks less often.
    func upgradeToPasskey() async throws -> CreatedPasskey? {
        let begun = try JSONDecoder().decode(Begun<CreationOptionsJSON>.self, from: try await api.post("register/begin")).publicKey
        report("register-begin", "rp=\(begun.rp.id) user=\(begun.user.name) excluded=\(begun.excludeCredentials?.count ?? 0)")
        guard let challenge = Data(base64URLEncoded: begun.challenge), let userID = Data(base64URLEncoded: begun.user.id) else {
            throw PasskeyError.unexpected(code: 0, reason: "the bank's options are not base64url")
        }
        let request = provider.createCredentialRegistrationRequest(challenge: challenge, name: begun.user.name, userID: userID)
        request.displayName = begun.user.displayName
        if let preference = begun.authenticatorSelection?.userVerification {
            request.userVerificationPreference = ASAuthorizationPublicKeyCredentialUserVerificationPreference(rawValue: preference)
        }
        request.excludedCredentials = (begun.excludeCredentials ?? []).compactMap { Data(base64URLEncoded: $0.id) }
            .map { ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: $0) }

        let passkey: CreatedPasskey
        do {
            passkey = try await coordinator.register(request)
        } catch PasskeyError.userCanceled {
            report("passkey", "canceled")
            report("upgrade-decline", String(decoding: try await api.post("upgrade/decline"), as: UTF8.self))
            return nil
        }
        report("passkey", "created \(passkey.credentialID.base64URLEncodedString()) \(passkey.attachment)")
        let id = passkey.credentialID.base64URLEncodedString()
        let response = RegistrationResponseJSON(
            id: id, rawId: id,
            response: .init(clientDataJSON: passkey.rawClientDataJSON.base64URLEncodedString(),
                            attestationObject: passkey.rawAttestationObject.base64URLEncodedString(), transports: ["internal", "hybrid"]),
            authenticatorAttachment: passkey.attachment)
        report("register-finish", String(decoding: try await api.post("register/finish", Finish(credential: response)), as: UTF8.self))
        return passkey
    }

    func signOut() async throws {
        report("logout", String(decoding: try await api.post("logout"), as: UTF8.self))
    }

    /// Signs in with a passkey of `username`'s, the bank listing them. `tamper` may change the
    /// signature before it is sent (to see the bank refuse it).
    func signInWithPasskey(username: String, tamper: (inout PasskeySignature) -> Void = { _ in }) async throws {
        let begun = try JSONDecoder().decode(Begun<RequestOptionsJSON>.self, from: try await api.post("login/begin", ["username": username])).publicKey
        report("login-begin", "allowed=\(begun.allowCredentials?.count ?? 0)")
        guard let challenge = Data(base64URLEncoded: begun.challenge) else {
            throw PasskeyError.unexpected(code: 0, reason: "the bank's challenge is not base64url")
        }
        let request = provider.createCredentialAssertionRequest(challenge: challenge)
        request.allowedCredentials = (begun.allowCredentials ?? []).compactMap { Data(base64URLEncoded: $0.id) }
            .map { ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: $0) }
        if let preference = begun.userVerification {
            request.userVerificationPreference = ASAuthorizationPublicKeyCredentialUserVerificationPreference(rawValue: preference)
        }
        var signed = try await coordinator.signIn(request)
        report("passkey", "signed \(signed.credentialID.base64URLEncodedString()) \(signed.attachment)")
        tamper(&signed)
        let id = signed.credentialID.base64URLEncodedString()
        let response = AuthenticationResponseJSON(
            id: id, rawId: id,
            response: .init(clientDataJSON: signed.rawClientDataJSON.base64URLEncodedString(),
                            authenticatorData: signed.rawAuthenticatorData.base64URLEncodedString(),
                            signature: signed.signature.base64URLEncodedString(), userHandle: signed.userID?.base64URLEncodedString()),
            authenticatorAttachment: signed.attachment)
        report("login-finish", String(decoding: try await api.post("login/finish", Finish(credential: response)), as: UTF8.self))
    }
}
