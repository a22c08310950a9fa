@testable import AuthenticationServices
import Foundation
import Session
import TestSupport
import Testing
import VirtualAuthenticator

extension PlatformPasskeyTests {
    /// Which phone: the host's setups — a throw-away account, an existing vault, a device that
    /// joins an account's store — each a phone an app's passkey code runs on.
    @Suite @MainActor struct HostSetupTests {
        let app = "ABCDE12345.com.example.app"
        let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: "example.com")
        let coordinator = PasskeyCoordinator()

        func register(on host: AuthenticationServicesHost, _ name: String = "alice") async throws -> ASAuthorizationPlatformPublicKeyCredentialRegistration {
            AuthenticationServicesHost.current = host
            let made = try await coordinator.perform(provider.createCredentialRegistrationRequest(
                challenge: Data(repeating: 5, count: 32), name: name, userID: Data(name.utf8)))
            return try #require(made.credential as? ASAuthorizationPlatformPublicKeyCredentialRegistration)
        }

        func signIn(on host: AuthenticationServicesHost, options: ASAuthorizationController.RequestOptions = [])
            async throws -> ASAuthorizationPlatformPublicKeyCredentialAssertion {
            AuthenticationServicesHost.current = host
            let signed = try await coordinator.perform(provider.createCredentialAssertionRequest(challenge: Data(repeating: 6, count: 32)),
                                                       options: options)
            return try #require(signed.credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion)
        }

        /// The throw-away phone: a vault of its own in a temporary directory, its PIN known to the
        /// person (Face ID matches: UV), removed when the host goes.
        @Test func aThrowAwayPhoneIsRemovedWithItsHost() async throws {
            var host: AuthenticationServicesHost? = try .throwAwayPhone(applicationIdentifier: app,
                                                                       associatedDomains: AssociatedDomains(presuming: ["example.com"]))
            let directory = try #require(host?.setup?.directory)
            #expect(FileManager.default.fileExists(atPath: directory + "/vault"))
            #expect(try host?.session.deviceName(nil) == "iphone")
            _ = try await register(on: try #require(host))
            let signed = try await signIn(on: try #require(host))
            #expect(try AuthenticatorData(parsing: Array(signed.rawAuthenticatorData)).flags.contains(.userVerified))

            AuthenticationServicesHost.current = nil
            host = nil
            #expect(!FileManager.default.fileExists(atPath: directory))
        }

        /// A throw-away phone made in a given directory is kept there; another host opens that
        /// vault as a phone (``vaultPhone``) and signs in with the passkey made on the first.
        @Test func aPhoneInAGivenDirectoryIsKeptAndOpensAgainAsAVaultPhone() async throws {
            let directory = try TemporaryDirectory()
            let path = directory.path + "/phone"
            var first: AuthenticationServicesHost? = try .throwAwayPhone(applicationIdentifier: app,
                                                                        associatedDomains: AssociatedDomains(presuming: ["example.com"]),
                                                                        device: "work-phone", pin: "2468", directory: path, passphrase: "kept")
            let made = try await register(on: try #require(first))
            AuthenticationServicesHost.current = nil
            first = nil
            #expect(FileManager.default.fileExists(atPath: path + "/header"))

            let wrong = #expect(throws: SessionError.self) {
                try AuthenticationServicesHost.vaultPhone(at: path, passphrase: "wrong", applicationIdentifier: app,
                                                          associatedDomains: AssociatedDomains(presuming: ["example.com"]))
            }
            #expect(wrong?.name == .vaultLocked)
            let again = try AuthenticationServicesHost.vaultPhone(at: path, passphrase: "kept", pin: "2468", applicationIdentifier: app,
                                                                  associatedDomains: AssociatedDomains(presuming: ["example.com"]))
            defer { AuthenticationServicesHost.current = nil }
            #expect(try again.session.deviceName(again.device) == "work-phone")
            #expect(try await signIn(on: again).credentialID == made.credentialID)
        }

        /// Two phones of one iCloud account: one made on a directory store, one that joins it with
        /// the account's recovery secret. A passkey made on the first reaches the second only after
        /// the sync delays (2 s up, 3 s down) have passed on the virtual clock they share.
        @Test func aJoiningPhoneGetsThePasskeyAfterTheSyncDelay() async throws {
            let directory = try TemporaryDirectory()
            let store = directory.path + "/store"
            let clock = VirtualClock(start: 1_800_000_000_000)
            let domains = AssociatedDomains(presuming: ["example.com"])
            let iphone = try AuthenticationServicesHost.throwAwayPhone(applicationIdentifier: app, associatedDomains: domains, store: store,
                                                                       clock: clock)
            defer { AuthenticationServicesHost.current = nil }
            try iphone.session.setDelays(upload: DelayRange(lower: 2000, upper: 2000), download: DelayRange(lower: 3000, upper: 3000))
            let ipad = try AuthenticationServicesHost.joiningPhone(store: store, recoverySecret: try #require(iphone.recoverySecret),
                                                                   applicationIdentifier: app, associatedDomains: domains, device: "ipad",
                                                                   pin: "5555", clock: clock)
            let made = try await register(on: iphone)
            let attestation = try CBORValue.decode(Array(try #require(made.rawAttestationObject)))
            let authData = try #require(attestation[.text("authData")]?.bytesValue)
            let attested = try #require(try AuthenticatorData(parsing: authData).attestedCredentialData)

            // Nothing on the iPad yet: with no passkey here, a request that prefers local ones shows nothing.
            await #expect(throws: ASAuthorizationError(.canceled, userInfo: [NSLocalizedFailureReasonErrorKey: "No credentials available for login."])) { _ = try await signIn(on: ipad, options: .preferImmediatelyAvailableCredentials) }
            try ipad.session.clock(.advance(milliseconds: 4999))
            await #expect(throws: ASAuthorizationError(.canceled, userInfo: [NSLocalizedFailureReasonErrorKey: "No credentials available for login."])) { _ = try await signIn(on: ipad, options: .preferImmediatelyAvailableCredentials) }
            try ipad.session.clock(.advance(milliseconds: 1))
            let signed = try await signIn(on: ipad, options: .preferImmediatelyAvailableCredentials)
            #expect(signed.credentialID == made.credentialID)
            let message = Array(signed.rawAuthenticatorData) + SHA256.hash(Array(signed.rawClientDataJSON))
            #expect(SignatureVerifier.verify(signature: Array(signed.signature), message: message, spki: attested.publicKey.subjectPublicKeyInfo))
            // The iPad verified its person with its own PIN.
            #expect(try AuthenticatorData(parsing: Array(signed.rawAuthenticatorData)).flags.contains(.userVerified))
        }
    }
}
