import AuthenticationServices
import Foundation
import Session
import TestSupport
import Testing
import VirtualAuthenticator

extension PlatformPasskeyTests {
    /// `ASAuthorizationPasswordRequest` hands the app the saved password the person picks among
    /// those of its associated domains (another domain's are not offered); a dismissed sheet ends
    /// `.canceled`; with no saved password it ends `.canceled` without UI, with iOS's reason.
    @Test(.timeLimit(.minutes(1)))
    func aPasswordRequestAnswersWithTheSavedPasswordThePersonPicks() async throws {
        let directory = try TemporaryDirectory()
        let phones = try Phones(in: directory.path)
        defer { AuthenticationServicesHost.current = nil }
        let host = phones.phone, log = DelegateLog()
        let provider = ASAuthorizationPasswordProvider()

        host.person = PersonRequest(action: .wrongPIN)
        ASAuthorizationController.with([provider.createRequest()], log).performRequests()
        let none = try #require(await log.next().error)
        #expect(none.code == .canceled && (none as NSError).code == 1001)
        #expect((none as NSError).userInfo[NSLocalizedFailureReasonErrorKey] as? String == "No credentials available for login.")

        host.person = PersonRequest()
        host.savePassword("elsewhere", user: "mallory", domain: "other.example")
        host.savePassword("first", user: "alice", domain: "example.com")
        host.savePassword("second", user: "bob", domain: "example.com")
        host.savePassword("changed", user: "alice", domain: "example.com")
        #expect(host.savedPasswords(domain: "example.com").map(\.user) == ["bob", "alice"])

        ASAuthorizationController.with([provider.createRequest()], log).performRequests(options: .preferImmediatelyAvailableCredentials)
        let first = try await log.next().authorization
        #expect(first.provider is ASAuthorizationPasswordProvider)
        let bob = try #require(first.credential as? ASPasswordCredential)
        #expect(bob.user == "bob" && bob.password == "second")

        host.sheetPick = .password(user: "alice")
        ASAuthorizationController.with([provider.createRequest()], log).performRequests()
        let alice = try #require(try await log.next().authorization.credential as? ASPasswordCredential)
        #expect(alice.user == "alice" && alice.password == "changed")

        host.sheetPick = .password(user: "mallory")
        ASAuthorizationController.with([provider.createRequest()], log).performRequests()
        #expect(try (await log.next().authorization.credential as? ASPasswordCredential)?.user == "bob")

        host.person = PersonRequest(action: .cancel)
        ASAuthorizationController.with([provider.createRequest()], log).performRequests()
        #expect(await log.next().error?.code == .canceled)
        #expect(ASPasswordCredential(user: "u", password: "p").user == "u")
    }

    /// A controller of an assertion request and a password request shows one sheet: the person's
    /// pick decides the kind of the authorization (its provider and credential) — a passkey by
    /// default, a saved password when the person picks it or when the phone has no passkey, but
    /// never the password of an account whose passkey is offered;
    /// with neither, `.preferImmediatelyAvailableCredentials` ends `.canceled`.
    @Test(.timeLimit(.minutes(1)))
    func anAssertionAndAPasswordRequestAnswerWithWhatThePersonPicks() async throws {
        let directory = try TemporaryDirectory()
        let phones = try Phones(in: directory.path)
        defer { AuthenticationServicesHost.current = nil }
        let host = phones.phone, log = DelegateLog()
        let passkeys = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: "example.com")
        let passwords = ASAuthorizationPasswordProvider()
        func both() -> [ASAuthorizationRequest] {
            [passkeys.createCredentialAssertionRequest(challenge: Data("both".utf8)), passwords.createRequest()]
        }

        host.person = PersonRequest(action: .wrongPIN)
        ASAuthorizationController.with(both(), log).performRequests(options: .preferImmediatelyAvailableCredentials)
        #expect(await log.next().error?.code == .canceled)
        host.person = PersonRequest()

        host.savePassword("secret", user: "alice", domain: "example.com")
        ASAuthorizationController.with(both(), log).performRequests()
        let onlyPassword = try await log.next().authorization
        #expect(onlyPassword.provider is ASAuthorizationPasswordProvider && onlyPassword.credential is ASPasswordCredential)

        let alice = try await registerPasskey("alice")
        ASAuthorizationController.with(both(), log).performRequests()
        let passkey = try await log.next().authorization
        #expect(passkey.provider === passkeys)
        #expect((passkey.credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion)?.credentialID == alice.id)

        // Alice's account has a passkey here: the sheet offers it alone, whatever the person would
        // pick (measured on iOS 27); Bob's password, of an account without one, can be picked.
        host.sheetPick = .password(user: "alice")
        ASAuthorizationController.with(both(), log).performRequests()
        let collapsed = try await log.next().authorization
        #expect(collapsed.provider === passkeys)
        #expect((collapsed.credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion)?.credentialID == alice.id)
        host.savePassword("bobs", user: "bob", domain: "example.com")
        host.sheetPick = .password(user: "bob")
        ASAuthorizationController.with(both(), log).performRequests()
        let picked = try await log.next().authorization
        #expect(picked.provider is ASAuthorizationPasswordProvider)
        #expect((picked.credential as? ASPasswordCredential)?.password == "bobs")
    }

    /// What iOS refuses before it asks anything, with its reasons: a registration beside another
    /// kind of request, two requests of one kind.
    @Test(.timeLimit(.minutes(1)))
    func requestsIOSCannotCombineFailWithItsReasons() async throws {
        let directory = try TemporaryDirectory()
        _ = try Phones(in: directory.path)
        defer { AuthenticationServicesHost.current = nil }
        let log = DelegateLog()
        let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: "example.com")
        let registration = provider.createCredentialRegistrationRequest(challenge: Data("c".utf8), name: "a", userID: Data("a".utf8))
        let cases: [([ASAuthorizationRequest], String)] = [
            ([registration, ASAuthorizationPasswordProvider().createRequest()], "Registration requests cannot be used with other types of requests."),
            ([provider.createCredentialAssertionRequest(challenge: Data("c".utf8)), registration], "Registration requests cannot be used with other types of requests."),
            ([signInRequest(), signInRequest()], "Found duplicate requests. Only one of each type of request is currently supported."),
        ]
        for (requests, reason) in cases {
            ASAuthorizationController.with(requests, log).performRequests()
            let failed = try #require(await log.next().error)
            #expect(failed.code == .failed)
            #expect((failed as NSError).userInfo[NSLocalizedFailureReasonErrorKey] as? String == reason)
        }
    }
}
