@testable import AuthenticationServices
import Foundation
import Session
import TestSupport
import Testing

extension PlatformPasskeyTests {
    /// A throw-away phone goes with its host even while an AutoFill-assisted request of the app
    /// waits on it: the waiting request does not keep the phone, and its vault directory is
    /// removed. The app's controller still waits, and its `cancel()` still ends it `.canceled`.
    @Test(.timeLimit(.minutes(1)))
    func aThrowAwayPhoneIsRemovedWithItsHostWhileAnAutoFillRequestWaits() async throws {
        var host: AuthenticationServicesHost? = try .throwAwayPhone(applicationIdentifier: "ABCDE12345.com.example.app",
                                                                   associatedDomains: AssociatedDomains(presuming: ["example.com"]))
        let directory = try #require(host?.setup?.directory)
        AuthenticationServicesHost.current = host
        defer { AuthenticationServicesHost.current = nil }
        let log = DelegateLog()
        let controller = ASAuthorizationController.with([signInRequest()], log)
        controller.performAutoFillAssistedRequests()
        #expect(try await #require(host).isAutoFillWaiting())

        AuthenticationServicesHost.current = nil
        weak let gone = host
        host = nil
        #expect(gone == nil)
        #expect(!FileManager.default.fileExists(atPath: directory))

        controller.cancel()
        let canceled = await log.next()
        #expect(canceled.controller === controller && canceled.error == ASAuthorizationError(.canceled))
    }
}
