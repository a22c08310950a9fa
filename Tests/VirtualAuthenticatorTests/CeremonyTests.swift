import Foundation
import Testing
@testable import VirtualAuthenticator

private let origin = "https://login.example.com"
private let fixedTime: UInt64 = 1_700_000_000
private let up: UInt8 = 0x01, uv: UInt8 = 0x04, be: UInt8 = 0x08, bs: UInt8 = 0x10, at: UInt8 = 0x40

/// An authenticator over an in-memory store, behind a client whose public suffix list is "com".
/// Options start from `creationObject()` / `requestObject()` (ClientTests.swift): RP example.com,
/// user id 01 02 03, challenge 00 01 02 (create) or 04 05 06 (get).
private struct Harness {
    let store = InMemoryCredentialStore()
    let authenticator: Authenticator<InMemoryCredentialStore, ScriptedUser>
    let client: WebAuthnClient<InMemoryCredentialStore, ScriptedUser>

    init(user: ScriptedUser = ScriptedUser(), configuration: AuthenticatorConfiguration = .init()) {
        authenticator = Authenticator(configuration: configuration, store: store, user: user, clock: .fixed(seconds: fixedTime))
        client = WebAuthnClient(authenticator: authenticator, suffixes: { PublicSuffixList(text: "com\n") })
    }

    func register(fault: Fault? = nil, _ tweak: (inout CreationOptions) -> Void = { _ in }) throws -> RegistrationResponse {
        var options = try CreationOptions(json: jsonBytes(creationObject()))
        tweak(&options)
        return try client.create(options: options, origin: origin, fault: fault)
    }

    func authenticate(fault: Fault? = nil, _ tweak: (inout RequestOptions) -> Void = { _ in }) throws -> AuthenticationResponse {
        var options = try RequestOptions(json: jsonBytes(requestObject()))
        tweak(&options)
        return try client.get(options: options, origin: origin, fault: fault)
    }

    var storedIds: [[UInt8]] { store.stored.map(\.0.id) }
}

/// The attestation object of a registration, decoded.
private struct DecodedAttestation {
    let format: String?
    let statement: CBORValue?
    let authDataBytes: [UInt8]
    let authData: AuthenticatorData

    init(_ response: RegistrationResponse) throws {
        let object = try CBORValue.decode(response.result.attestationObject.bytes)
        format = object[.text("fmt")]?.textValue
        statement = object[.text("attStmt")]
        authDataBytes = try #require(object[.text("authData")]?.bytesValue)
        authData = try AuthenticatorData(parsing: authDataBytes)
    }
}

private func verifies(_ signature: [UInt8]?, authData: [UInt8], clientDataJSON: [UInt8], spki: [UInt8]) -> Bool {
    guard let signature else { return false }
    return SignatureVerifier.verify(signature: signature, message: authData + SHA256.hash(clientDataJSON), spki: spki)
}

// MARK: - Registration

@Test func registrationProducesAVerifiablePackedSelfAttestation() throws {
    let harness = Harness(configuration: .init(profile: .authctl))
    let response = try harness.register { $0.attestation = .direct }
    let decoded = try DecodedAttestation(response)
    let attested = try #require(decoded.authData.attestedCredentialData)

    #expect(decoded.format == "packed")
    #expect(decoded.statement?[.text("alg")]?.intValue == -7)
    #expect(decoded.statement?[.text("x5c")] == nil)
    #expect(decoded.authData.rpIdHash == SHA256.hash(Array("example.com".utf8)))
    #expect(decoded.authData.signCount == 0)
    #expect(attested.aaguid == AuthenticatorConfiguration.authctlAAGUID)
    #expect(attested.credentialId == response.result.credential.id)
    #expect(attested.credentialId.count == 16)
    #expect(attested.publicKey.subjectPublicKeyInfo == response.result.publicKeySPKI)
    #expect(decoded.authDataBytes == response.result.authenticatorData)
    #expect(verifies(decoded.statement?[.text("sig")]?.bytesValue, authData: decoded.authDataBytes,
                     clientDataJSON: response.clientDataJSON, spki: attested.publicKey.subjectPublicKeyInfo))
    #expect(response.clientDataJSON == Array(
        #"{"type":"webauthn.create","challenge":"AAEC","origin":"https://login.example.com","crossOrigin":false}"#.utf8))
    // Canonical member order: "fmt" first.
    #expect(response.result.attestationObject.bytes.starts(with: hexBytes("a3 63 66 6d 74 66 70 61 63 6b 65 64 67")))
}

@Test func packedSignatureDoesNotVerifyForOtherClientData() throws {
    let response = try Harness().register { $0.attestation = .direct }
    let decoded = try DecodedAttestation(response)
    var otherClientData = response.clientDataJSON
    otherClientData[otherClientData.count - 2] ^= 0x01
    #expect(!verifies(decoded.statement?[.text("sig")]?.bytesValue, authData: decoded.authDataBytes,
                      clientDataJSON: otherClientData, spki: response.result.publicKeySPKI))
}

@Test func registrationWithoutAttestationHasAnEmptyNoneStatement() throws {
    let decoded = try DecodedAttestation(try Harness().register())
    #expect(decoded.format == "none")
    #expect(decoded.statement == .map([]))
}

@Test(arguments: [
    (UserVerificationRequirement.discouraged, true, up | be | bs | at),
    (.required, true, up | uv | be | bs | at),
    (.preferred, true, up | uv | be | bs | at),
    (.preferred, false, up | be | bs | at),
])
func registrationFlags(requirement: UserVerificationRequirement, canVerify: Bool, expected: UInt8) throws {
    let response = try Harness(user: ScriptedUser(canVerify: canVerify)).register { $0.userVerification = requirement }
    #expect(try DecodedAttestation(response).authData.flags.rawValue == expected)
}

@Test func registrationStoresTheCredential() throws {
    let harness = Harness()
    let response = try harness.register()
    let stored = try #require(harness.store.stored.first?.0)
    #expect(harness.store.stored.count == 1)
    #expect(stored == response.result.credential)
    #expect(stored.rpId == "example.com")
    #expect(stored.userHandle == [1, 2, 3])
    #expect(stored.userName == "alice@example.com")
    #expect(stored.createdAt == fixedTime)
    #expect(stored.backupEligible && stored.backupState)
    #expect(harness.store.stored.first?.1.subjectPublicKeyInfo == response.result.publicKeySPKI)
}

@Test func excludedCredentialIsRefusedWithoutStoringAnything() throws {
    let harness = Harness()
    let first = try harness.register()
    expectAuthenticatorError(.matchedExcludedCredential) {
        try harness.register {
            $0.userId = [9, 9]
            $0.excludeCredentials = [[0xEE], first.result.credential.id]
        }
    }
    #expect(harness.storedIds == [first.result.credential.id])
}

@Test func excludeListWithoutAStoredIdDoesNotBlock() throws {
    let harness = Harness()
    let first = try harness.register()
    let second = try harness.register {
        $0.userId = [9, 9]
        $0.excludeCredentials = [[UInt8](repeating: 0xEE, count: 16)]
    }
    #expect(harness.storedIds == [first.result.credential.id, second.result.credential.id])
}

@Test func registeringTwiceForTheSameUserReplacesThePasskey() throws {
    let harness = Harness()
    let first = try harness.register()
    let second = try harness.register()
    #expect(first.result.credential.id != second.result.credential.id)
    #expect(harness.storedIds == [second.result.credential.id])
    _ = try harness.register { $0.userId = [4, 5, 6] }
    #expect(harness.store.stored.count == 2)
}

@Test func registrationWithoutES256IsTheAuthenticatorsRefusal() throws {
    // CTAP2_ERR_UNSUPPORTED_ALGORITHM: the browser's NotAllowedError (BrowserRulesTests).
    let harness = Harness()
    expectAuthenticatorError(.notHandled) { try harness.register { $0.algorithms = [-257, -8] } }
    let request = MakeCredentialRequest(
        clientDataHash: [UInt8](repeating: 0, count: 32), rpId: "example.com", userHandle: [1], userName: "a",
        userDisplayName: "A", algorithms: [-257], excludeList: [], performUserVerification: false, attestation: .none)
    expectAuthenticatorError(.notHandled) { try harness.authenticator.makeCredential(request) }
    #expect(harness.store.stored.isEmpty)
}

@Test func wrongRPIDIsASecurityError() throws {
    let harness = Harness()
    expectAuthenticatorError(.securityError) { try harness.register { $0.rpId = "other.com" } }
    expectAuthenticatorError(.securityError) { try harness.register { $0.rpId = "com" } }
    #expect(harness.store.stored.isEmpty)
    _ = try harness.register()
    expectAuthenticatorError(.securityError) { try harness.authenticate { $0.rpId = "other.com" } }
}

@Test func crossPlatformAttachmentIsNotHandled() {
    let harness = Harness()
    expectAuthenticatorError(.notHandled) { try harness.register { $0.authenticatorAttachment = "cross-platform" } }
    #expect(harness.store.stored.isEmpty)
}

@Test func failedUserVerificationStoresNothing() {
    let harness = Harness(user: ScriptedUser(verification: AuthenticatorError(.failed, "x")))
    expectAuthenticatorError(.failed) { try harness.register { $0.userVerification = .required } }
    #expect(harness.store.stored.isEmpty)
}

@Test func requiredVerificationWithoutAnEnrolledPINFindsNoEligibleAuthenticator() {
    // Not even asked for presence: an authenticator that cannot verify is not eligible (NotAllowedError).
    let harness = Harness(user: ScriptedUser(canVerify: false, presence: AuthenticatorError(.canceled, "asked")))
    expectAuthenticatorError(.notHandled) { try harness.register { $0.userVerification = .required } }
    #expect(harness.store.stored.isEmpty)
}

@Test func declinedPresenceIsCanceledAndStoresNothing() {
    let harness = Harness(user: ScriptedUser(presence: AuthenticatorError(.canceled, "no")))
    expectAuthenticatorError(.canceled) { try harness.register() }
    #expect(harness.store.stored.isEmpty)
}

// MARK: - Authentication

@Test func discoverableGetSignsVerifiably() throws {
    let harness = Harness()
    let registration = try harness.register()
    let response = try harness.authenticate()
    let authData = try AuthenticatorData(parsing: response.result.authenticatorData)

    #expect(response.result.credential.id == registration.result.credential.id)
    #expect(response.result.credential.userHandle == [1, 2, 3])
    #expect(authData.rpIdHash == SHA256.hash(Array("example.com".utf8)))
    #expect(authData.flags.rawValue == up | uv | be | bs)
    #expect(authData.attestedCredentialData == nil)
    #expect(authData.signCount == 0)
    #expect(verifies(response.result.signature, authData: response.result.authenticatorData,
                     clientDataJSON: response.clientDataJSON, spki: registration.result.publicKeySPKI))
    #expect(response.clientDataJSON == Array(
        #"{"type":"webauthn.get","challenge":"BAUG","origin":"https://login.example.com","crossOrigin":false}"#.utf8))
}

@Test func getWithAnAllowedStoredCredentialUsesIt() throws {
    let harness = Harness()
    let alice = try harness.register()
    _ = try harness.register { $0.userId = [7] }
    let response = try harness.authenticate { $0.allowCredentials = [alice.result.credential.id] }
    #expect(response.result.credential.id == alice.result.credential.id)
    #expect(verifies(response.result.signature, authData: response.result.authenticatorData,
                     clientDataJSON: response.clientDataJSON, spki: alice.result.publicKeySPKI))
}

@Test func discoverableGetPicksTheNewestCredentialByDefault() throws {
    let harness = Harness()
    _ = try harness.register()
    let newest = try harness.register { $0.userId = [7] }
    #expect(try harness.authenticate().result.credential.id == newest.result.credential.id)
}

@Test func getWithAllowCredentialsNotInTheStoreIsNotHandled() throws {
    let harness = Harness()
    expectAuthenticatorError(.notHandled) { try harness.authenticate() }
    _ = try harness.register()
    expectAuthenticatorError(.notHandled) {
        try harness.authenticate { $0.allowCredentials = [[UInt8](repeating: 0x42, count: 16)] }
    }
}

@Test func failedUserVerificationFailsTheAssertion() throws {
    // Registered by a user who verifies, then used by one whose verification fails.
    let registrar = Harness()
    _ = try registrar.register()
    let failing = Harness(user: ScriptedUser(verification: AuthenticatorError(.failed, "x")))
    try failing.store.save(registrar.store.stored[0].0, privateKey: registrar.store.stored[0].1, replacing: [],
                           verification: ScriptedUser.Verified())
    expectAuthenticatorError(.failed) { try failing.authenticate { $0.userVerification = .required } }
}

@Test func userVerificationDiscouragedLeavesUVClearAndNeverAsks() throws {
    // Verification would fail if it were attempted, so success shows it was not.
    let harness = Harness(user: ScriptedUser(verification: AuthenticatorError(.failed, "x")))
    let registration = try harness.register { $0.userVerification = .discouraged }
    #expect(try DecodedAttestation(registration).authData.flags.rawValue & uv == 0)
    let assertion = try harness.authenticate { $0.userVerification = .discouraged }
    #expect(try AuthenticatorData(parsing: assertion.result.authenticatorData).flags.rawValue == up | be | bs)
}

@Test func countingCredentialsRaiseTheSignCountDurablyOnEachAssertion() throws {
    let harness = Harness(configuration: .init(signCounter: .perCredential))
    _ = try harness.register()
    let counts = try (1...3).map { _ in try AuthenticatorData(parsing: harness.authenticate().result.authenticatorData).signCount }
    #expect(counts == [1, 2, 3])
    #expect(harness.store.stored.first?.0.signCount == 3)
}

@Test func passkeysOnTheGlobalCounterShareOneCount() throws {
    let harness = Harness(configuration: .init(signCounter: .global))
    let first = try harness.register { $0.userId = [1] }
    let second = try harness.register { $0.userId = [2] }
    var counts = [UInt32]()
    for id in [first.result.credential.id, second.result.credential.id, first.result.credential.id] {
        let assertion = try harness.authenticate { $0.allowCredentials = [id] }
        counts.append(try AuthenticatorData(parsing: assertion.result.authenticatorData).signCount)
    }
    #expect(counts == [1, 2, 3])
    #expect(harness.store.globalCount == 3)
    #expect(harness.store.stored.map(\.0.signCount) == [3, 2])
}

@Test func syncedPasskeysKeepTheSignCountAtZero() throws {
    let harness = Harness()
    _ = try harness.register()
    for _ in 1...2 {
        #expect(try AuthenticatorData(parsing: harness.authenticate().result.authenticatorData).signCount == 0)
    }
    #expect(harness.store.stored.first?.0.signCount == 0)
}


// MARK: - User verification bound to the credential, and faults

/// A user who records every verification asked of them.
private final class CountingUser: UserInteraction {
    var verifications = 0
    var prompts: [UserPrompt] = []
    var canVerify: Bool { true }
    func selectAccount(from candidates: AccountCandidates, for prompt: UserPrompt) throws(AuthenticatorError) -> Credential {
        candidates.newest
    }
    func confirmPresence(_ prompt: UserPrompt) throws(AuthenticatorError) { prompts.append(prompt) }
    func verifyUser(_ prompt: UserPrompt) throws(AuthenticatorError) -> ScriptedUser.Verified {
        verifications += 1
        return ScriptedUser.Verified()
    }
}

@Test func aCredentialMadeWithVerificationIsVerifiedOnEveryUse() throws {
    let user = CountingUser()
    let store = InMemoryCredentialStore()
    let client = WebAuthnClient(authenticator: Authenticator(store: store, user: user), suffixes: { PublicSuffixList(text: "com\n") })
    var options = try CreationOptions(json: jsonBytes(creationObject()))
    options.userVerification = .required
    _ = try client.create(options: options, origin: origin)
    #expect(store.stored.first?.0.requiresUserVerification == true)
    var request = try RequestOptions(json: jsonBytes(requestObject()))
    request.userVerification = .discouraged
    request.timeout = 1234
    let response = try client.get(options: request, origin: origin)
    #expect(user.verifications == 2)
    #expect(response.result.authenticatorData[32] & uv == uv)
    #expect(user.prompts.last?.timeoutMilliseconds == 1234)
}

@Test func faultsChangeOnlyWhatTheyName() throws {
    let harness = Harness(configuration: .init(signCounter: .perCredential))
    let registration = try harness.register()
    let spki = registration.result.publicKeySPKI
    _ = try harness.authenticate()  // count 1
    let honest = try harness.authenticate()  // count 2
    #expect(verifies(honest.result.signature, authData: honest.result.authenticatorData, clientDataJSON: honest.clientDataJSON, spki: spki))

    let badSignature = try harness.authenticate(fault: .badSignature)
    #expect(!verifies(badSignature.result.signature, authData: badSignature.result.authenticatorData,
                      clientDataJSON: badSignature.clientDataJSON, spki: spki))

    let wrongRP = try harness.authenticate(fault: .wrongRpIdHash)
    #expect(Array(wrongRP.result.authenticatorData.prefix(32)) == SHA256.hash(Array(Fault.attackerRpId.utf8)))
    #expect(verifies(wrongRP.result.signature, authData: wrongRP.result.authenticatorData, clientDataJSON: wrongRP.clientDataJSON, spki: spki))

    let wrongOrigin = try harness.authenticate(fault: .wrongOrigin)
    #expect(String(decoding: wrongOrigin.clientDataJSON, as: UTF8.self).contains(#""origin":"https://attacker.example""#))

    let upCleared = try harness.authenticate(fault: .upCleared)
    #expect(upCleared.result.authenticatorData[32] & up == 0)
    #expect(verifies(upCleared.result.signature, authData: upCleared.result.authenticatorData, clientDataJSON: upCleared.clientDataJSON, spki: spki))

    let claimed = try harness.authenticate(fault: .uvClaimedWithoutCheck) { $0.userVerification = .discouraged }
    #expect(claimed.result.authenticatorData[32] & uv == uv)
    #expect(!verifies(claimed.result.signature, authData: claimed.result.authenticatorData, clientDataJSON: claimed.clientDataJSON, spki: spki))

    // The reported count goes back below the stored one, which no faulted response moves.
    let regressed = try harness.authenticate(fault: .counterRegress)
    let reported = regressed.result.authenticatorData[33..<37].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    #expect(reported == regressed.result.credential.signCount - 1)
    #expect(harness.store.stored.first?.0.signCount == 2)
    let next = try harness.authenticate()
    #expect(try AuthenticatorData(parsing: next.result.authenticatorData).signCount == 3)
}

@Test func aFaultedRegistrationStoresNothingAndReplacesNothing() throws {
    let harness = Harness()
    let honest = try harness.register()
    for fault in [Fault.badCBOR, .wrongChallenge, .upCleared, .wrongRpIdHash] {
        _ = try harness.register(fault: fault)
        #expect(harness.storedIds == [honest.result.credential.id], "\(fault)")
    }
}

@Test func aFaultThatCannotApplyIsRefusedBeforeAnythingHappens() throws {
    let harness = Harness()
    #expect(throws: AuthenticatorError.self) { try harness.client.create(options: CreationOptions(json: jsonBytes(creationObject())), origin: origin, fault: .counterRegress) }
    #expect(harness.storedIds.isEmpty)
}


// MARK: - Response JSON written directly

/// The responses' own JSON is byte for byte what the encoder writes, with and without extension
/// results, for every algorithm and attachment.
@Test(arguments: [(COSEAlgorithm.es256, AuthenticatorProfile.iCloudKeychain), (.edDSA, .authctl), (.rs256, .securityKey)])
func responseJSONIsTheEncodersBytes(_ algorithm: COSEAlgorithm, _ profile: AuthenticatorProfile) throws {
    let harness = Harness(configuration: .init(profile: profile, attestationCA: try AttestationCA.generate()))
    let plain = try harness.register { $0.algorithms = [algorithm.rawValue]; $0.attestation = .direct }
    #expect(plain.json == JSONOutput.string(plain))
    let extended = try harness.register {
        $0.algorithms = [algorithm.rawValue]
        $0.userId = [9]
        $0.extensions.credProps = true
    }
    #expect(extended.json == JSONOutput.string(extended) && extended.json.contains("credProps"))
    let assertion = try harness.authenticate()
    #expect(assertion.json == JSONOutput.string(assertion))
    #expect(try JSONSerialization.jsonObject(with: Data(assertion.json.utf8)) is [String: Any])
}
