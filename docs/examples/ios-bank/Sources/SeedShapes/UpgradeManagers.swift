import Foundation
import Observation

/// A user signed in with a password.
struct User {
    let id: String
    let name: String
}

/// The banking guide's upgrade: after a password sign-in, offer a passkey unless the person
/// declined it before or has one; a dismissed sheet is remembered as declined.
@MainActor
@Observable
final class PasskeyUpgradeManager {
    enum UpgradeState: Equatable {
        case idle, registering, success
        case error(String)
    }

    var showUpgradePrompt = false
    var upgradeState: UpgradeState = .idle
    let relyingPartyID = "yourapp.com"

    private let registrationManager = PasskeyRegistrationManager()

    func checkAndOfferUpgrade(for user: User) async {
        guard !UserDefaults.standard.bool(forKey: "passkey_upgrade_declined_\(user.id)") else { return }
        guard #available(iOS 16.0, *) else { return }
        guard (try? await AuthAPIClient.shared.userHasPasskey(userID: user.id)) == false else { return }
        showUpgradePrompt = true
    }

    func registerPasskeyForCurrentUser(_ user: User) async {
        upgradeState = .registering
        do {
            let begun = try await AuthAPIClient.shared.beginPasskeyRegistration(username: user.name)
            guard let challenge = Data(base64URLEncoded: begun.challenge) else { throw PasskeyError.invalidResponse }
            let registration = try await registrationManager.registerPasskey(with: PasskeyRegistrationChallenge(
                challenge: challenge, userID: Data(user.id.utf8), userName: user.name, userDisplayName: user.name,
                relyingPartyID: relyingPartyID, relyingPartyName: "Your App"))
            try await AuthAPIClient.shared.finishPasskeyRegistration(
                credentialID: registration.credentialID.base64URLEncodedString(),
                clientDataJSON: registration.rawClientDataJSON.base64URLEncodedString(),
                attestationObject: registration.rawAttestationObject.base64URLEncodedString())
            upgradeState = .success
            showUpgradePrompt = false
        } catch PasskeyError.userCancelled {
            // Skipped: not asked again.
            UserDefaults.standard.set(true, forKey: "passkey_upgrade_declined_\(user.id)")
            upgradeState = .idle
            showUpgradePrompt = false
        } catch {
            upgradeState = .error(error.localizedDescription)
        }
    }
}

/// The migration guide's upgrade: offered a moment after a password sign-in, at most three
/// times, the count and the passkey's id kept in UserDefaults. Not isolated: SwiftUI's view
/// calls it from its own tasks.
@Observable
class AuthUpgradeManager {
    var shouldPromptUpgrade = false
    private let upgradeKey = "passkeyUpgradeOfferedCount"
    private let maxOfferCount = 3

    func checkAndPromptUpgrade() {
        let offered = UserDefaults.standard.integer(forKey: upgradeKey)
        let hasPasskey = UserDefaults.standard.bool(forKey: "hasPasskeyRegistered")
        guard !hasPasskey, offered < maxOfferCount, isPasskeySupported() else { return }
        Task {
            // A moment after the sign-in, not on top of it.
            try await Task.sleep(nanoseconds: 2_000_000_000)
            await MainActor.run {
                shouldPromptUpgrade = true
            }
        }
    }

    func isPasskeySupported() -> Bool {
        if #available(iOS 16, *) {
            return true
        }
        return false
    }

    func userDeclinedUpgrade() {
        UserDefaults.standard.set(UserDefaults.standard.integer(forKey: upgradeKey) + 1, forKey: upgradeKey)
        shouldPromptUpgrade = false
    }

    func userAcceptedUpgrade() async throws {
        let coordinator = AuthenticationCoordinator()
        let challenge = try await server.fetchRegistrationChallenge()
        let username = try currentUsername()

        let registration = try await coordinator.registerPasskey(
            username: username,
            userID: Data(username.utf8).sha256(),
            challenge: challenge,
            rpID: "example.com"
        )
        try await server.addPasskey(registration, forUser: username)

        UserDefaults.standard.set(true, forKey: "hasPasskeyRegistered")
        UserDefaults.standard.set(registration.credentialID.base64EncodedString(), forKey: "passkeyCredentialID")
        shouldPromptUpgrade = false
        Analytics.log("passkey_registered", parameters: ["source": "upgrade_prompt"])
    }

    /// The app's server.
    var server: AuthAPIClient { AuthAPIClient.shared }

    /// The user signed in with the password.
    func currentUsername() throws -> String {
        guard let name = UserDefaults.standard.string(forKey: "signedInUsername") else { throw AuthenticationCoordinator.UpgradeError.notAuthenticated }
        return name
    }
}

/// The upgrade sheet's logic (a SwiftUI sheet on iOS): accept registers, "later" declines.
@MainActor
final class PasskeyUpgradeSheet {
    let upgradeManager = AuthUpgradeManager()
    private(set) var isRegistering = false

    func accept() async {
        isRegistering = true
        try? await upgradeManager.userAcceptedUpgrade()
        isRegistering = false
    }

    func later() {
        upgradeManager.userDeclinedUpgrade()
    }
}
