#if os(Linux)
import AuthenticationServices
import Foundation
import Session
import Testing
@testable import ios_bank

/// The app's own PasskeyCoordinator, unchanged, in `swift test`: each test runs on a phone of its
/// own — a throw-away authctl account, removed with the host — whose app is associated with
/// yourbank.example by the bank's apple-app-site-association file, given as bytes.
@MainActor @Suite(.serialized) struct PasskeyCoordinatorTests {
    let phone: AuthenticationServicesHost
    let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: "yourbank.example")

    init() throws {
        let file = #"{"webcredentials": {"apps": ["ABCDE12345.example.yourbank"]}}"#
        phone = try AuthenticationServicesHost.throwAwayPhone(
            applicationIdentifier: "ABCDE12345.example.yourbank",
            associatedDomains: AssociatedDomains(["webcredentials:yourbank.example"], files: ["yourbank.example": Data(file.utf8)]))
        AuthenticationServicesHost.current = phone
    }

    @Test func aPasskeyIsMadeAndSignsIn() async throws {
        let coordinator = PasskeyCoordinator()
        let created = try await coordinator.register(
            provider.createCredentialRegistrationRequest(challenge: Data(repeating: 7, count: 32), name: "alice", userID: Data("user-1".utf8)))
        let request = provider.createCredentialAssertionRequest(challenge: Data(repeating: 9, count: 32))
        request.allowedCredentials = [ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: created.credentialID)]
        let signed = try await coordinator.signIn(request)
        #expect(signed.credentialID == created.credentialID && signed.userID == Data("user-1".utf8))
    }

    @Test func aDismissedSheetTakesTheCanceledBranch() async throws {
        phone.person = PersonRequest(action: .cancel)
        do {
            _ = try await PasskeyCoordinator().signIn(provider.createCredentialAssertionRequest(challenge: Data(repeating: 9, count: 32)))
            Issue.record("a dismissed sheet signed")
        } catch let failure as PasskeyFailure {
            #expect(failure.handling == .userCanceled && failure.code == 1001)
        }
    }

    @Test func aPasskeyTheBankAlreadyHasIsExcluded() async throws {
        let coordinator = PasskeyCoordinator()
        let made = try await coordinator.register(
            provider.createCredentialRegistrationRequest(challenge: Data(repeating: 7, count: 32), name: "alice", userID: Data("user-1".utf8)))
        let again = provider.createCredentialRegistrationRequest(challenge: Data(repeating: 8, count: 32), name: "alice", userID: Data("user-1".utf8))
        again.excludedCredentials = [ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: made.credentialID)]
        await #expect(throws: PasskeyFailure.self) { _ = try await coordinator.register(again) }
        do { _ = try await coordinator.register(again) } catch let failure as PasskeyFailure {
            #expect(failure.handling == .duplicateCredential && failure.code == 1006)
        }
    }
}
#endif
