import AuthenticationServices
import Foundation
import Session
import TestSupport
import Testing
import VirtualAuthenticator

/// The bytes of a key, for comparing with what Session answered.
private func bytes(_ key: SymmetricKey?) -> [UInt8]? {
    key?.withUnsafeBytes { Array($0) }
}

/// A sign-in performed by Session directly on the phone, with the RP's options JSON: what a web
/// page of the RP gets, to compare the module's outputs with.
@MainActor
private func signDirectly(_ host: AuthenticationServicesHost, _ options: [String: Any]) throws -> [String: Any] {
    let json = try JSONSerialization.data(withJSONObject: options)
    let signed = try host.session.sign(SignRequest(device: host.device, caller: CallerContext(origin: "https://example.com", nativeApp: true),
                                                   options: .json(Array(json))))
    return try extensionResults(signed.json)
}

extension PlatformPasskeyTests {
    /// The largeBlob and prf extensions (and the hybrid switch) of the platform requests, mapped
    /// onto authctl's extensions through the options JSON and the client extension results.
    @Suite @MainActor struct PasskeyExtensionTests {
        /// iCloud Keychain keeps a large blob with every passkey: `.supportRequired` and
        /// `.supportPreferred` both report it supported; a write replaces the blob and a read gives
        /// it back — the blob authctl's own largeBlob read gives — and a write that does not name
        /// exactly one passkey fails.
        @Test func aLargeBlobIsSupportedWrittenAndReadBack() async throws {
            let directory = try TemporaryDirectory()
            let host = try associatedPhone(in: directory.path)
            defer { AuthenticationServicesHost.current = nil }
            let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: "example.com")
            let coordinator = PasskeyCoordinator()

            let plain = try #require(try await coordinator.perform(
                provider.createCredentialRegistrationRequest(challenge: Data(repeating: 1, count: 32), name: "carol", userID: Data("c".utf8))
            ).credential as? ASAuthorizationPlatformPublicKeyCredentialRegistration)
            #expect(plain.largeBlob == nil)

            let preferred = provider.createCredentialRegistrationRequest(challenge: Data(repeating: 2, count: 32), name: "dave", userID: Data("d".utf8))
            preferred.largeBlob = .supportPreferred
            let madePreferred = try #require(try await coordinator.perform(preferred).credential as? ASAuthorizationPlatformPublicKeyCredentialRegistration)
            #expect(madePreferred.largeBlob?.isSupported == true)

            let required = provider.createCredentialRegistrationRequest(challenge: Data(repeating: 3, count: 32), name: "alice", userID: Data("a".utf8))
            required.largeBlob = .supportRequired
            #expect(required.largeBlob?.supportRequirement == .required)
            let made = try #require(try await coordinator.perform(required).credential as? ASAuthorizationPlatformPublicKeyCredentialRegistration)
            #expect(made.largeBlob?.isSupported == true)
            let id = made.credentialID

            func signIn(_ input: ASAuthorizationPublicKeyCredentialLargeBlobAssertionInput, allowing: [Data]) async throws
                -> ASAuthorizationPublicKeyCredentialLargeBlobAssertionOutput.OperationResult? {
                let request = provider.createCredentialAssertionRequest(challenge: Data("blob".utf8))
                request.allowedCredentials = allowing.map { ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: $0) }
                request.largeBlob = input
                let assertion = try #require(try await coordinator.perform(request).credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion)
                return assertion.largeBlob?.result
            }

            guard case .read(data: nil) = try await signIn(.read, allowing: [id]) else {
                Issue.record("a passkey without a blob read one")
                return
            }
            let blob = Data("the certificate the bank issued".utf8)
            guard case .write(success: true) = try await signIn(.write(blob), allowing: [id]) else {
                Issue.record("the write was not stored")
                return
            }
            guard case .read(data: let read) = try await signIn(.read, allowing: [id]), read == blob else {
                Issue.record("the blob read back is not the one written")
                return
            }
            // A blob over authctl's 4096 bytes is not stored; the one before stays.
            guard case .write(success: false) = try await signIn(.write(Data(repeating: 7, count: 4097)), allowing: [id]) else {
                Issue.record("a blob over 4096 bytes was stored")
                return
            }
            guard case .read(data: blob) = try await signIn(.read, allowing: [id]) else {
                Issue.record("a refused write changed the blob")
                return
            }
            // The blob is authctl's: its own largeBlob read on the device gives the same bytes.
            let direct = try signDirectly(host, ["rpId": "example.com", "challenge": Base64URL.encode(Data("d".utf8)),
                                                 "allowCredentials": [["type": "public-key", "id": Base64URL.encode(id)]],
                                                 "extensions": ["largeBlob": ["read": true]]])
            #expect((direct["largeBlob"] as? [String: Any])?["blob"] as? String == Base64URL.encode(blob))

            // WebAuthn: a write names exactly one passkey.
            do {
                _ = try await signIn(.write(blob), allowing: [])
                Issue.record("a write that named no passkey was answered")
            } catch let error as ASAuthorizationError where error.code == .failed {
                #expect(error.userInfo[NSLocalizedFailureReasonErrorKey] != nil)
            }
            _ = host
        }

        /// The PRF outputs are the WebAuthn prf extension's for the same inputs: what Session gives a
        /// page of the RP that passes the salt as `eval.first` (the system hashes the inputs once,
        /// into SHA-256("WebAuthn PRF" ‖ 0 ‖ input)); another salt gives other outputs; per-passkey
        /// inputs win for the passkey they name; the outputs at registration are those of a sign-in.
        @Test func thePRFOutputsAreThoseOfTheSameSaltsThroughAuthctl() async throws {
            let directory = try TemporaryDirectory()
            let host = try associatedPhone(in: directory.path)
            defer { AuthenticationServicesHost.current = nil }
            let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: "example.com")
            let coordinator = PasskeyCoordinator()
            let salt1 = Data("vault key, first".utf8), salt2 = Data("vault key, second".utf8), other = Data("another salt".utf8)

            let checked = provider.createCredentialRegistrationRequest(challenge: Data(repeating: 4, count: 32), name: "bob", userID: Data("b".utf8))
            checked.prf = .checkForSupport
            let support = try #require(try await coordinator.perform(checked).credential as? ASAuthorizationPlatformPublicKeyCredentialRegistration)
            #expect(support.prf?.isSupported == true)
            #expect(support.prf?.first == nil && support.prf?.second == nil)

            let evaluated = provider.createCredentialRegistrationRequest(challenge: Data(repeating: 5, count: 32), name: "alice", userID: Data("a".utf8))
            evaluated.prf = .inputValues(.saltInput1(salt1, saltInput2: salt2))
            let made = try #require(try await coordinator.perform(evaluated).credential as? ASAuthorizationPlatformPublicKeyCredentialRegistration)
            let atRegistration = try #require(made.prf)
            #expect(atRegistration.isSupported)
            #expect(atRegistration.first?.bitCount == 256 && atRegistration.second?.bitCount == 256)
            let id = made.credentialID

            let signIn = provider.createCredentialAssertionRequest(challenge: Data("prf".utf8))
            signIn.allowedCredentials = [ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: id)]
            signIn.prf = .inputValues(ASAuthorizationPublicKeyCredentialPRFAssertionInput.InputValues(saltInput1: salt1, saltInput2: salt2))
            let signed = try #require(try await coordinator.perform(signIn).credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion)
            let outputs = try #require(signed.prf)
            #expect(outputs.first == atRegistration.first && outputs.second == atRegistration.second)
            #expect(outputs.first != outputs.second)

            // A page of the RP passing the same salts to authctl gets the same bytes.
            let allow: [[String: Any]] = [["type": "public-key", "id": Base64URL.encode(id)]]
            let page = try signDirectly(host, ["rpId": "example.com", "challenge": Base64URL.encode(Data("p".utf8)), "allowCredentials": allow,
                                               "extensions": ["prf": ["eval": ["first": Base64URL.encode(salt1), "second": Base64URL.encode(salt2)]]]])
            let pageResults = try #require((page["prf"] as? [String: Any])?["results"] as? [String: Any])
            #expect(Base64URL.decode(try #require(pageResults["first"] as? String)) == bytes(outputs.first))
            #expect(Base64URL.decode(try #require(pageResults["second"] as? String)) == bytes(outputs.second))
            // ... and a page that hashed the salt itself gets other bytes: the module does not hash it.
            let hashed = SHA256.hash(Array("WebAuthn PRF".utf8) + [0] + Array(salt1))
            let twice = try signDirectly(host, ["rpId": "example.com", "challenge": Base64URL.encode(Data("p".utf8)), "allowCredentials": allow,
                                                "extensions": ["prf": ["eval": ["first": Base64URL.encode(hashed)]]]])
            let twiceFirst = ((twice["prf"] as? [String: Any])?["results"] as? [String: Any])?["first"] as? String
            #expect(twiceFirst.flatMap(Base64URL.decode) != bytes(outputs.first))

            // Another salt, another key; per-passkey inputs win for the passkey they name.
            let byCredential = provider.createCredentialAssertionRequest(challenge: Data("prf2".utf8))
            byCredential.allowedCredentials = [ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: id)]
            byCredential.prf = .inputValues(.saltInput1(salt1), perCredentialInputValues: [id: .saltInput1(other)])
            let otherSigned = try #require(try await coordinator.perform(byCredential).credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion)
            let otherOutputs = try #require(otherSigned.prf)
            #expect(otherOutputs.first != outputs.first)
            #expect(otherOutputs.second == nil)
            let otherPage = try signDirectly(host, ["rpId": "example.com", "challenge": Base64URL.encode(Data("p".utf8)), "allowCredentials": allow,
                                                    "extensions": ["prf": ["eval": ["first": Base64URL.encode(other)]]]])
            let otherPageFirst = ((otherPage["prf"] as? [String: Any])?["results"] as? [String: Any])?["first"] as? String
            #expect(otherPageFirst.flatMap(Base64URL.decode) == bytes(otherOutputs.first))

            // An empty input is an input like any other.
            let empty = provider.createCredentialAssertionRequest(challenge: Data("prf-empty".utf8))
            empty.allowedCredentials = [ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: id)]
            empty.prf = .inputValues(.saltInput1(Data()))
            let emptySigned = try #require(try await coordinator.perform(empty).credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion)
            #expect(emptySigned.prf?.first.bitCount == 256)
            #expect(emptySigned.prf?.first != outputs.first)

            // Inputs only for a passkey that does not sign (the person picks alice's, the newest): no outputs.
            let elsewhere = provider.createCredentialAssertionRequest(challenge: Data("prf3".utf8))
            elsewhere.allowedCredentials = [id, support.credentialID].map { ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: $0) }
            elsewhere.prf = .perCredentialInputValues([support.credentialID: .saltInput1(salt1)])
            #expect(elsewhere.prf?.inputValues == nil)
            let none = try #require(try await coordinator.perform(elsewhere).credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion)
            #expect(none.credentialID == id)
            #expect(none.prf == nil)

            // Per-passkey inputs for a passkey the request does not allow: the request fails (a
            // browser's SyntaxError), with the reason.
            let unlisted = provider.createCredentialAssertionRequest(challenge: Data("prf4".utf8))
            unlisted.allowedCredentials = [ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: id)]
            unlisted.prf = .perCredentialInputValues([Data("no such passkey".utf8): .saltInput1(salt1)])
            do {
                _ = try await coordinator.perform(unlisted)
                Issue.record("per-passkey inputs for a passkey not allowed were answered")
            } catch let error as ASAuthorizationError where error.code == .failed {
                #expect((error.userInfo[NSLocalizedFailureReasonErrorKey] as? String)?.contains("evalByCredential") == true)
            }
        }

        /// `shouldShowHybridTransport` (macOS, Mac Catalyst) is kept; with no other device to offer,
        /// turning it off changes nothing: the passkey here still signs.
        @Test func turningHybridOffStillSignsWithThePasskeyHere() async throws {
            let directory = try TemporaryDirectory()
            _ = try associatedPhone(in: directory.path)
            defer { AuthenticationServicesHost.current = nil }
            let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: "example.com")
            let coordinator = PasskeyCoordinator()
            let made = try #require(try await coordinator.perform(
                provider.createCredentialRegistrationRequest(challenge: Data(repeating: 6, count: 32), name: "erin", userID: Data("e".utf8))
            ).credential as? ASAuthorizationPlatformPublicKeyCredentialRegistration)

            let signIn = provider.createCredentialAssertionRequest(challenge: Data("hybrid".utf8))
            #expect(signIn.shouldShowHybridTransport)
            signIn.shouldShowHybridTransport = false
            #expect(!signIn.shouldShowHybridTransport)
            let signed = try #require(try await coordinator.perform(signIn).credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion)
            #expect(signed.credentialID == made.credentialID)
            #expect(signed.attachment == .platform)
        }
    }
}
