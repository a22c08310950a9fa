import Foundation
import Observation

/// The banking app's errors, in the words it shows.
enum BankingAuthError: LocalizedError {
    case accountLocked, deviceNotTrusted, sessionExpired, passkeysNotSupported

    var errorDescription: String? {
        switch self {
        case .accountLocked: "The account is locked. Call us."
        case .deviceNotTrusted: "This device is not registered."
        case .sessionExpired: "The session has expired. Sign in again."
        case .passkeysNotSupported: "This device does not support passkeys."
        }
    }
}

/// The guide's banking service: a session kept as a token, a passkey sign-in whose raw values go
/// to the bank, and a passkey verified again before a sensitive operation.
@MainActor
@Observable
final class BankingAuthService {
    enum AuthStep {
        case checking, needsLogin, biometricPrompt, sessionActive
        case error(BankingAuthError)
    }

    var isAuthenticated = false
    var currentUser: BankUser?
    var authStep: AuthStep = .checking
    /// The bank's domain, the RP ID of its passkeys.
    let relyingPartyID = "yourbank.com"

    private let authManager = PasskeyAuthenticationManager()

    /// A token kept from an earlier sign-in resumes the session; else the person signs in.
    func initializeSession() async {
        authStep = .checking
        guard let token = KeychainHelper.loadToken(), !token.isExpired else {
            authStep = .needsLogin
            return
        }
        currentUser = try? await BankingAPI.shared.validateToken(token.value)
        isAuthenticated = currentUser != nil
        authStep = isAuthenticated ? .sessionActive : .needsLogin
    }

    func loginWithPasskey() async {
        authStep = .biometricPrompt
        do {
            let begun = try await BankingAPI.shared.beginAuth()
            guard let challenge = Data(base64URLEncoded: begun.challenge) else { throw BankingAuthError.sessionExpired }
            let assertion = try await authManager.authenticate(with: PasskeyAssertionChallenge(
                challenge: challenge, relyingPartyID: relyingPartyID,
                allowedCredentialIDs: begun.allowedCredentials.compactMap { Data(base64URLEncoded: $0) }))
            let result = try await BankingAPI.shared.finishAuth(
                credentialID: assertion.credentialID.base64URLEncodedString(),
                clientDataJSON: assertion.rawClientDataJSON.base64URLEncodedString(),
                authenticatorData: assertion.rawAuthenticatorData.base64URLEncodedString(),
                signature: assertion.signature.base64URLEncodedString())
            KeychainHelper.saveToken(AuthToken(value: result.token, expiresAt: result.expiresAt))
            currentUser = result.user
            isAuthenticated = true
            authStep = .sessionActive
        } catch BankingAuthError.accountLocked {
            authStep = .error(.accountLocked)
        } catch PasskeyError.userCancelled {
            authStep = .needsLogin
        } catch {
            authStep = .error(.sessionExpired)
        }
    }

    /// Verifies the person again with a passkey before a transfer or a PIN change. The request
    /// names no passkey: the device offers the account's. The signature is verified over
    /// clientDataJSON's hash, so the bank needs clientDataJSON too.
    func reVerifyForSensitiveOperation() async throws {
        let begun = try await BankingAPI.shared.beginAuth()
        guard let challenge = Data(base64URLEncoded: begun.challenge) else { throw BankingAuthError.sessionExpired }
        let assertion = try await authManager.authenticate(with: PasskeyAssertionChallenge(
            challenge: challenge, relyingPartyID: relyingPartyID, allowedCredentialIDs: []))
        try await BankingAPI.shared.verifyForTransaction(
            credentialID: assertion.credentialID.base64URLEncodedString(),
            clientDataJSON: assertion.rawClientDataJSON.base64URLEncodedString(),
            signature: assertion.signature.base64URLEncodedString(),
            authenticatorData: assertion.rawAuthenticatorData.base64URLEncodedString())
    }
}

struct BankUser: Decodable {
    let id: String
    let name: String
    let maskedAccount: String
}

struct AuthToken {
    let value: String
    let expiresAt: Date
    var isExpired: Bool { expiresAt < Date() }
}

/// The session token, kept where the app keeps secrets. On iOS: the Keychain (Security's
/// `SecItemAdd`/`SecItemCopyMatching`), which Linux has not; here, this process's memory.
@MainActor
enum KeychainHelper {
    private static var token: AuthToken?

    static func saveToken(_ token: AuthToken) { self.token = token }
    static func loadToken() -> AuthToken? { token }
}

/// The transfer screen's logic (a SwiftUI view with a form on iOS): a transfer is sent only
/// after the passkey is verified again; a dismissed sheet shows nothing.
@MainActor
@Observable
final class TransferScreen {
    let authService: BankingAuthService
    var amount = ""
    var recipient = ""
    private(set) var isVerifying = false
    private(set) var transferError: String?
    private(set) var showSuccess = false

    init(authService: BankingAuthService) {
        self.authService = authService
    }

    var canSubmit: Bool { !isVerifying && !amount.isEmpty && !recipient.isEmpty }

    func initiateTransfer() async {
        isVerifying = true
        transferError = nil
        defer { isVerifying = false }
        do {
            try await authService.reVerifyForSensitiveOperation()
            try await BankingAPI.shared.sendTransfer(amount: amount, recipient: recipient)
            showSuccess = true
        } catch PasskeyError.userCancelled {
            // Dismissed: nothing to show.
        } catch {
            transferError = error.localizedDescription
        }
    }
}
