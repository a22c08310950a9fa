import AuthenticationServices
import Foundation
import Session
import TestSupport
import Testing
import VirtualAuthenticator

/// The reason of a `.failed` error, after checking it is one.
private func failedReason(_ outcome: Outcome) -> String? {
    #expect(outcome.error?.code == .failed, "\(outcome.result)")
    return outcome.error?.userInfo[NSLocalizedFailureReasonErrorKey] as? String
}

extension PlatformPasskeyTests {
    /// A passkey registered with an empty user ID (accepted, as Chromium accepts it) signs in with
    /// that user ID: an empty `userID`, never `nil` — the property is `Data!`, and app code reads
    /// it as `assertion.userID.base64EncodedString()`, which would trap on `nil`.
    @Test(.timeLimit(.minutes(1)))
    func aPasskeyWithAnEmptyUserIDSignsInWithAnEmptyUserIDNotNil() async throws {
        let directory = try TemporaryDirectory()
        _ = try associatedPhone(in: directory.path)
        defer { AuthenticationServicesHost.current = nil }
        let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: "example.com")
        let log = DelegateLog()
        ASAuthorizationController.with([provider.createCredentialRegistrationRequest(challenge: Data([1]), name: "nobody", userID: Data())], log)
            .performRequests()
        let made = try #require(try await log.next().authorization.credential as? ASAuthorizationPlatformPublicKeyCredentialRegistration)

        let request = provider.createCredentialAssertionRequest(challenge: Data([2]))
        request.allowedCredentials = [ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: made.credentialID)]
        ASAuthorizationController.with([request], log).performRequests()
        let signed = try #require(try await log.next().authorization.credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion)
        let userID: Data? = signed.userID
        #expect(userID == Data())
        #expect(signed.userID.base64EncodedString() == "")
    }

    /// What a hostile RP's options can put in a request is answered, never a trap: an empty or a
    /// 1 MB challenge signs; a user ID over 64 bytes fails with WebAuthn's reason and makes
    /// nothing; names with control characters or of 100 KB register (kept to 64 bytes); excluded and allowed
    /// credential IDs of 0 or 2,000 bytes, duplicated, match nothing; a large blob of 0 bytes is
    /// written and one of 10 MB refused, the one before kept; PRF salts of 0 bytes and 1 MB give
    /// 32-byte outputs; an RP ID that is not a lower-case domain fails with the reason.
    @Test(.timeLimit(.minutes(2)))
    func hostileRequestInputsAreAnsweredWithoutATrapAndTheVaultIsIntact() async throws {
        let directory = try TemporaryDirectory()
        let host = try associatedPhone(in: directory.path)
        defer { AuthenticationServicesHost.current = nil }
        let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: "example.com")
        let log = DelegateLog()
        func perform(_ request: ASAuthorizationRequest, options: ASAuthorizationController.RequestOptions = []) async -> Outcome {
            ASAuthorizationController.with([request], log).performRequests(options: options)
            return await log.next()
        }
        func registration(_ name: String, userID: Data, challenge: Data = Data([1])) -> ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest {
            provider.createCredentialRegistrationRequest(challenge: challenge, name: name, userID: userID)
        }
        func held() throws -> [Credential] { try host.session.passkeys(device: "phone", rpId: "example.com") }

        let alice = try #require(try await perform(registration("alice", userID: Data("a".utf8), challenge: Data())).authorization.credential
            as? ASAuthorizationPlatformPublicKeyCredentialRegistration)
        let huge = try #require(try await perform(provider.createCredentialAssertionRequest(challenge: Data(repeating: 9, count: 1 << 20)))
            .authorization.credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion)
        let clientData = try #require(JSONSerialization.jsonObject(with: huge.rawClientDataJSON) as? [String: String])
        #expect(clientData["challenge"] == Base64URL.encode(Data(repeating: 9, count: 1 << 20)))

        #expect(failedReason(await perform(registration("long-id", userID: Data(repeating: 1, count: 65)))) == "options.user.id must be 1 to 64 bytes, got 65 (TypeError)")
        let control = "a\u{0}b\u{7}\n\u{202E}c"
        _ = try await perform(registration(control, userID: Data("c".utf8))).authorization
        let long = registration(String(repeating: "n", count: 100_000), userID: Data("n".utf8))
        long.displayName = String(repeating: "é", count: 100_000)
        _ = try await perform(long).authorization
        // The authenticator keeps 64 bytes of each (WebAuthn §6.4.1 lets it truncate there).
        #expect(try held().map(\.userName).sorted() == [control, "alice", String(repeating: "n", count: 64)].sorted())
        #expect(try held().first { $0.userName.hasPrefix("n") }?.userDisplayName == String(repeating: "é", count: 32))

        let excluded = registration("bob", userID: Data("b".utf8))
        excluded.excludedCredentials = [Data(), Data(repeating: 3, count: 2000), Data(repeating: 3, count: 2000)]
            .map { ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: $0) }
        _ = try await perform(excluded).authorization
        for id in [Data(), Data(repeating: 3, count: 2000)] {
            let request = provider.createCredentialAssertionRequest(challenge: Data([2]))
            request.allowedCredentials = [ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: id)]
            #expect(failedReason(await perform(request)) == "none of the 1 allowed credentials is here for example.com")
            #expect(await perform(request, options: .preferImmediatelyAvailableCredentials).error?.code == .canceled)
        }

        func blob(_ input: ASAuthorizationPublicKeyCredentialLargeBlobAssertionInput) async throws -> ASAuthorizationPublicKeyCredentialLargeBlobAssertionOutput.OperationResult? {
            let request = provider.createCredentialAssertionRequest(challenge: Data([3]))
            request.allowedCredentials = [ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: alice.credentialID)]
            request.largeBlob = input
            return try (await perform(request).authorization.credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion)?.largeBlob?.result
        }
        guard case .write(success: true) = try await blob(.write(Data())), case .write(success: true) = try await blob(.write(Data("kept".utf8))),
              case .write(success: false) = try await blob(.write(Data(repeating: 1, count: 10 << 20))),
              case .read(data: Data("kept".utf8)) = try await blob(.read) else {
            Issue.record("a large blob of 0 bytes was refused, or one of 10 MB stored")
            return
        }

        let prf = provider.createCredentialAssertionRequest(challenge: Data([4]))
        prf.allowedCredentials = [ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: alice.credentialID)]
        prf.prf = .inputValues(.saltInput1(Data(), saltInput2: Data(repeating: 1, count: 1 << 20)))
        let outputs = try #require(try (await perform(prf).authorization.credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion)?.prf)
        #expect(outputs.first.bitCount == 256 && outputs.second?.bitCount == 256)

        for rpID in ["EXAMPLE.COM", "example.com.", "example.com:443", "", "bücher.example", "127.0.0.1"] {
            host.associatedDomains = AssociatedDomains(presuming: [rpID])
            let elsewhere = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: rpID)
            #expect(failedReason(await perform(elsewhere.createCredentialRegistrationRequest(challenge: Data([5]), name: "x", userID: Data("x".utf8)))) != nil, "\(rpID)")
        }
        #expect(try host.session.passkeys(device: "phone").count == 4)
    }

    /// An association file that is hostile JSON — nested 60,000 deep within the 128 KB, `null`,
    /// `apps` an object, `webcredentials` a list, numbers JSON cannot hold — verifies nothing,
    /// with iOS's reason, and traps nothing; a byte-order mark before a good file is read past.
    @Test(.timeLimit(.minutes(1)))
    func hostileAssociationFilesVerifyNothing() async throws {
        let directory = try TemporaryDirectory()
        let host = try associatedPhone(in: directory.path)
        defer { AuthenticationServicesHost.current = nil }
        let app = "TEAM123456.com.example.app"
        let nested = #"{"webcredentials":{"apps":"# + String(repeating: "[", count: 60_000) + String(repeating: "]", count: 60_000) + "}}"
        let log = DelegateLog()
        for body in [nested, "null", #"{"webcredentials":{"apps":{"a":1}}}"#, #"{"webcredentials":[1]}"#, #"{"webcredentials":{"apps":[1e999999]}}"#] {
            host.associatedDomains = try AssociatedDomains(["webcredentials:example.com"], files: ["example.com": Data(body.utf8)])
            ASAuthorizationController.with([signInRequest()], log).performRequests()
            #expect(failedReason(await log.next())
                == "Unable to verify webcredentials association of \(app) with domain example.com. Please try again in a few seconds.", "\(body.prefix(40))")
        }
        host.associatedDomains = try AssociatedDomains(["webcredentials:example.com"], files: ["example.com": Data("\u{FEFF}{\"webcredentials\":{\"apps\":[\"\(app)\"]}}".utf8)])
        ASAuthorizationController.with([signInRequest()], log).performRequests()
        #expect(failedReason(await log.next()) == "no passkey for example.com")
    }
}
