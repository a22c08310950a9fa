import AuthenticationServices
import Foundation
import Session
import TestSupport
import Testing

extension PlatformPasskeyTests {
    /// ASCredentialDataManager's reports (iOS 26.2) as authctl's signals on the phone: an unknown
    /// passkey is deleted, the user's passkeys not accepted are hidden (and come back when listed
    /// again), a new user name renames them; a domain the app is not associated with fails.
    @Suite @MainActor struct CredentialDataManagerTests {
        /// Registers a passkey for `name` through the module; its credential ID.
        private func register(_ name: String, userID: Data, with coordinator: PasskeyCoordinator) async throws -> Data {
            let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: "example.com")
            let request = provider.createCredentialRegistrationRequest(challenge: Data(repeating: 9, count: 32), name: name, userID: userID)
            request.displayName = name.capitalized
            return try #require(try await coordinator.perform(request).credential as? ASAuthorizationPlatformPublicKeyCredentialRegistration).credentialID
        }

        @Test func theReportsChangeThePasskeysAsAuthctlsSignalsDo() async throws {
            let directory = try TemporaryDirectory()
            let host = try associatedPhone(in: directory.path)
            defer { AuthenticationServicesHost.current = nil }
            let coordinator = PasskeyCoordinator()
            let alice = Data("alice-handle".utf8), bob = Data("bob-handle".utf8)
            let aliceID = try await register("alice", userID: alice, with: coordinator)
            let bobID = try await register("bob", userID: bob, with: coordinator)
            func held(_ id: Data) throws -> Credential? {
                try host.session.passkeys(device: "phone", rpId: "example.com").first { $0.id == Array(id) }
            }
            let manager = ASCredentialDataManager()

            // All accepted: the user's passkeys not listed are hidden, the other user's untouched.
            try await manager.reportAllAcceptedPublicKeyCredentials(relyingPartyIdentifier: "example.com", userHandle: alice, acceptedCredentialIDs: [])
            #expect(try held(aliceID)?.hidden == true)
            #expect(try held(bobID)?.hidden == false)
            try await manager.reportAllAcceptedPublicKeyCredentials(relyingPartyIdentifier: "example.com", userHandle: alice,
                                                                    acceptedCredentialIDs: [aliceID, Data("unknown".utf8)])
            #expect(try held(aliceID)?.hidden == false)

            // A new user name: that user's passkeys take it and keep their display name.
            try await manager.reportPublicKeyCredentialUpdate(relyingPartyIdentifier: "example.com", userHandle: alice, newName: "alice@new.example")
            #expect(try held(aliceID)?.userName == "alice@new.example")
            #expect(try held(aliceID)?.userDisplayName == "Alice")
            #expect(try held(bobID)?.userName == "bob")

            // Unknown: the passkey is deleted; an id that matches nothing changes nothing and succeeds.
            try await manager.reportUnknownPublicKeyCredential(relyingPartyIdentifier: "example.com", credentialID: Data("no such passkey".utf8))
            #expect(try host.session.passkeys(device: "phone").count == 2)
            try await manager.reportUnknownPublicKeyCredential(relyingPartyIdentifier: "example.com", credentialID: bobID)
            #expect(try held(bobID) == nil)
            #expect(try held(aliceID) != nil)

            // The name the reports had before iOS 26.2 does the same.
            try await ASCredentialUpdater().reportUnknownPublicKeyCredential(relyingPartyIdentifier: "example.com", credentialID: aliceID)
            #expect(try host.session.passkeys(device: "phone").isEmpty)
            try await manager.reportUnusedPasswordCredential(domain: "example.com", userName: "alice")
        }

        /// A report for a domain the app is not associated with fails as a request does — `.failed`,
        /// iOS's reason — and changes nothing; so does a report with no device.
        @Test func aDomainTheAppIsNotAssociatedWithIsRefused() async throws {
            let directory = try TemporaryDirectory()
            let host = try associatedPhone(in: directory.path)
            defer { AuthenticationServicesHost.current = nil }
            let coordinator = PasskeyCoordinator()
            let handle = Data("carol-handle".utf8)
            let id = try await register("carol", userID: handle, with: coordinator)
            let reason = "Application with identifier TEAM123456.com.example.app is not associated with domain other.example"

            let reports: [@MainActor () async throws -> Void] = [
                { try await ASCredentialDataManager().reportUnknownPublicKeyCredential(relyingPartyIdentifier: "other.example", credentialID: id) },
                { try await ASCredentialDataManager().reportAllAcceptedPublicKeyCredentials(relyingPartyIdentifier: "other.example", userHandle: handle, acceptedCredentialIDs: []) },
                { try await ASCredentialDataManager().reportPublicKeyCredentialUpdate(relyingPartyIdentifier: "other.example", userHandle: handle, newName: "x") },
                { try await ASCredentialDataManager().reportUnusedPasswordCredential(domain: "other.example", userName: "carol") },
                { try await ASCredentialUpdater().reportUnknownPublicKeyCredential(relyingPartyIdentifier: "other.example", credentialID: id) },
            ]
            for report in reports {
                do {
                    try await report()
                    Issue.record("a report for a domain the app is not associated with was accepted")
                } catch let error as ASAuthorizationError where error.code == .failed {
                    #expect(error.userInfo[NSLocalizedFailureReasonErrorKey] as? String == reason)
                    #expect(error.localizedDescription == "The operation couldn\u{2019}t be completed. " + reason)
                }
            }
            let kept = try #require(try host.session.passkeys(device: "phone").first)
            #expect(kept.id == Array(id) && kept.userName == "carol" && !kept.hidden)

            AuthenticationServicesHost.current = nil
            await #expect(throws: ASAuthorizationError.self) {
                try await ASCredentialDataManager().reportUnknownPublicKeyCredential(relyingPartyIdentifier: "example.com", credentialID: id)
            }
            #expect(try host.session.passkeys(device: "phone").count == 1)
        }
    }
}
