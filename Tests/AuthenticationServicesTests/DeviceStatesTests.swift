import AuthenticationServices
import Foundation
import Session
import Testing
import VirtualAuthenticator

extension PlatformPasskeyTests {
    /// What iOS reports of the phone's own state: no passcode, iCloud Keychain off, Face ID that
    /// does not match, Face ID locked out.
    @Suite @MainActor struct DeviceStatesTests {
        let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: "example.com")
        let coordinator = PasskeyCoordinator()

        /// A phone (PIN 1111) of a throw-away account with a second device, `ipad`, that has no
        /// PIN: a device without a passcode.
        func phone() throws -> AuthenticationServicesHost {
            let host = try AuthenticationServicesHost.throwAwayPhone(applicationIdentifier: "ABCDE12345.com.example.app",
                                                                     associatedDomains: AssociatedDomains(presuming: ["example.com"]))
            try host.session.addDevice("ipad", pin: nil)
            AuthenticationServicesHost.current = host
            return host
        }

        func register(_ name: String = "alice") async throws -> ASAuthorizationPlatformPublicKeyCredentialRegistration {
            let made = try await coordinator.perform(provider.createCredentialRegistrationRequest(
                challenge: Data(repeating: 3, count: 32), name: name, userID: Data(name.utf8)))
            return try #require(made.credential as? ASAuthorizationPlatformPublicKeyCredentialRegistration)
        }

        /// The error `body` ended with, as the app sees it.
        func failure(_ body: () async throws -> Void) async -> NSError? {
            do {
                try await body()
                return nil
            } catch {
                return error as NSError
            }
        }

        func reason(_ error: NSError?) -> String? { error?.userInfo[NSLocalizedFailureReasonErrorKey] as? String }

        func signIn() async throws -> ASAuthorizationPlatformPublicKeyCredentialAssertion {
            let signed = try await coordinator.perform(provider.createCredentialAssertionRequest(challenge: Data(repeating: 4, count: 32)))
            return try #require(signed.credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion)
        }

        /// A phone without a passcode, or with iCloud Keychain off, cannot make passkeys: iOS 26's
        /// `.deviceNotConfiguredForPasskeyCreation` (1010), before anything is asked.
        @Test func aPhoneWithoutPasscodeOrICloudKeychainCannotMakePasskeys() async throws {
            let host = try phone()
            defer { AuthenticationServicesHost.current = nil }

            host.device = "ipad"
            let noPasscode = await failure { _ = try await register() }
            #expect(noPasscode?.domain == ASAuthorizationErrorDomain)
            #expect(noPasscode?.code == 1010)
            #expect(reason(noPasscode) == "Device not configured for passkey requests.")
            #expect(try host.session.passkeys(device: "ipad").isEmpty)

            host.device = "iphone"
            try host.session.change(.passkeysSupported(false), device: "iphone")
            let keychainOff = await failure { _ = try await register() }
            #expect(keychainOff?.code == ASAuthorizationError.Code.deviceNotConfiguredForPasskeyCreation.rawValue)
            #expect(reason(keychainOff) == "Cannot create a passkey. iCloud Keychain is off.")
            try host.session.change(.passkeysSupported(true), device: "iphone")
            _ = try await register()
        }

        /// A sign-in on a phone without a passcode fails: it cannot verify its user.
        @Test func aSignInOnAPhoneWithoutPasscodeFails() async throws {
            let host = try phone()
            defer { AuthenticationServicesHost.current = nil }
            _ = try await register()

            host.device = "ipad"
            let failed = await failure { _ = try await signIn() }
            #expect(failed?.code == ASAuthorizationError.Code.failed.rawValue)
            #expect(reason(failed) == "Device not configured for passkey requests.")
        }

        /// Face ID that does not match counts one failed attempt on the device and falls back to the
        /// passcode: dismissed, the request ends `.canceled`; typed, it goes on, verified.
        @Test func faceIDThatDoesNotMatchFallsBackToThePasscode() async throws {
            let host = try phone()
            defer { AuthenticationServicesHost.current = nil }
            let made = try await register()

            host.person = PersonRequest(action: .wrongPIN)
            await #expect(throws: ASAuthorizationError(.canceled)) { _ = try await signIn() }
            #expect(try host.session.biometry(device: "iphone").failures == 1)
            await #expect(throws: ASAuthorizationError(.canceled)) { _ = try await register("bob") }
            #expect(try host.session.biometry(device: "iphone").failures == 2)

            host.passcodeFallback = .enterPasscode
            let signed = try await signIn()
            #expect(signed.credentialID == made.credentialID)
            let flags = try AuthenticatorData(parsing: Array(signed.rawAuthenticatorData)).flags
            #expect(flags.contains(.userVerified))
            #expect(try host.session.biometry(device: "iphone").failures == 0)
        }

        /// Face ID locked out (five failed matches in a row) is not tried: the passcode is asked at
        /// once. Dismissed, `.canceled` with nothing counted; typed, the request goes on and the
        /// lockout is lifted.
        @Test func aLockedOutPhoneAsksForThePasscodeAtOnce() async throws {
            let host = try phone()
            defer { AuthenticationServicesHost.current = nil }
            _ = try await register()

            host.person = PersonRequest(action: .wrongPIN)
            for _ in 0..<5 { await #expect(throws: ASAuthorizationError(.canceled)) { _ = try await signIn() } }
            #expect(try host.session.biometry(device: "iphone").lockedOut)

            host.person = PersonRequest()
            await #expect(throws: ASAuthorizationError(.canceled)) { _ = try await signIn() }
            let status = try host.session.biometry(device: "iphone")
            #expect(status.failures == 5 && status.lockedOut)

            host.passcodeFallback = .enterPasscode
            _ = try await signIn()
            #expect(try !host.session.biometry(device: "iphone").lockedOut)
            host.passcodeFallback = .dismiss
            _ = try await signIn()
        }
    }
}
