import AuthenticationServices
import Foundation

/// How a passkey request ended when it did not succeed, as the guide's code catches it
/// (`catch PasskeyError.userCancelled`).
enum PasskeyError: Error, Equatable {
    case userCancelled
    case authenticationFailed(reason: String)
    case invalidResponse
    case noPasskeyFound
    case notInteractive
    case duplicateCredential
    case unknown(code: Int)
}

/// A new passkey's raw values, as the app sends them to its server (the attestation object is
/// always there for a platform passkey).
struct PasskeyRegistration {
    let credentialID: Data
    let rawClientDataJSON: Data
    let rawAttestationObject: Data
}

/// A sign-in's raw values, as the app sends them to its server.
struct PasskeyAssertion {
    let credentialID: Data
    let rawClientDataJSON: Data
    let rawAuthenticatorData: Data
    let signature: Data
    let userID: Data?
}

/// What the server's registration begin gives the registration manager.
struct PasskeyRegistrationChallenge {
    let challenge: Data
    let userID: Data
    let userName: String
    let userDisplayName: String
    let relyingPartyID: String
    let relyingPartyName: String
}

/// What the server's sign-in begin gives the authentication manager.
struct PasskeyAssertionChallenge {
    let challenge: Data
    let relyingPartyID: String
    let allowedCredentialIDs: [Data]
}

/// Registers passkeys through the coordinator.
final class PasskeyRegistrationManager {
    private let coordinator = AuthenticationCoordinator()

    @MainActor
    func registerPasskey(with challenge: PasskeyRegistrationChallenge) async throws -> PasskeyRegistration {
        try await coordinator.registerPasskey(username: challenge.userName, userID: challenge.userID, challenge: challenge.challenge,
                                              rpID: challenge.relyingPartyID)
    }
}

/// Signs in with passkeys through the coordinator, Face ID verifying the person.
final class PasskeyAuthenticationManager {
    private let coordinator = AuthenticationCoordinator()

    @MainActor
    func authenticate(with challenge: PasskeyAssertionChallenge) async throws -> PasskeyAssertion {
        try await coordinator.signIn(challenge: challenge.challenge, rpID: challenge.relyingPartyID,
                                     allowedCredentialIDs: challenge.allowedCredentialIDs, userVerification: .required)
    }
}

extension Data {
    /// WebAuthn's base64url, without padding.
    init?(base64URLEncoded text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        self.init(base64Encoded: base64)
    }

    func base64URLEncodedString() -> String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
