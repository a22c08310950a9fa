import Foundation
import Testing
@testable import VirtualAuthenticator

/// Every flag rule (UP, UV, BE, BS, AT, ED; sign counts; UV asked only when it should be, and the
/// PIN really checked whenever UV is reported) and every fault, each under the request that makes
/// it matter: a UV rule under requests that ask for UV, a fault that touches UV under a request
/// that verifies, and so on. A user port records what it was asked, so a response's flags are
/// compared with what really happened (WebAuthn L3 §6.1 flags; CTAP 2.1 §6.1.2, §6.2.2).
@Suite struct FlagRuleTests {
    static let origin = "https://login.example.com"
    static let up: UInt8 = 0x01, uv: UInt8 = 0x04, be: UInt8 = 0x08, bs: UInt8 = 0x10, at: UInt8 = 0x40, ed: UInt8 = 0x80

    /// A user who records every prompt and every verification, and whose verification can fail
    /// (the wrong PIN): a UV=1 response is only honest when `verifications` went up.
    final class RecordingUser: UserInteraction {
        var presences = 0
        var verifications = 0
        var canVerify = true
        var wrongPIN = false
        func selectAccount(from candidates: AccountCandidates, for prompt: UserPrompt) throws(AuthenticatorError) -> Credential {
            candidates.newest
        }
        func confirmPresence(_ prompt: UserPrompt) throws(AuthenticatorError) { presences += 1 }
        func verifyUser(_ prompt: UserPrompt) throws(AuthenticatorError) -> ScriptedUser.Verified {
            verifications += 1
            if wrongPIN { throw AuthenticatorError(.failed, "the PIN did not match") }
            return ScriptedUser.Verified()
        }
    }

    struct Harness {
        let user = RecordingUser()
        let store = InMemoryCredentialStore()
        let client: WebAuthnClient<InMemoryCredentialStore, RecordingUser>

        init(_ configuration: AuthenticatorConfiguration = .init()) {
            let authenticator = Authenticator(configuration: configuration, store: store, user: user, clock: .fixed(seconds: 1_700_000_000))
            client = WebAuthnClient(authenticator: authenticator, suffixes: { PublicSuffixList(text: "com\n") })
        }

        func register(_ uv: UserVerificationRequirement, userId: [UInt8] = [1, 2, 3], fault: Fault? = nil,
                      caller: CallerContext = CallerContext(origin: FlagRuleTests.origin),
                      _ edit: (inout [String: Any]) -> Void = { _ in }) throws -> RegistrationResponse {
            var options = try CreationOptions(json: jsonBytes(creationObject(edit)))
            options.userVerification = uv
            options.userId = userId
            return try client.create(options: options, caller: caller, fault: fault)
        }

        func sign(_ uv: UserVerificationRequirement, allow: [[UInt8]] = [], fault: Fault? = nil,
                  _ edit: (inout [String: Any]) -> Void = { _ in }) throws -> AuthenticationResponse {
            var options = try RequestOptions(json: jsonBytes(requestObject(edit)))
            options.userVerification = uv
            options.allowCredentials = allow
            return try client.get(options: options, origin: FlagRuleTests.origin, fault: fault)
        }

        var storedCounts: [UInt32] { store.stored.map(\.0.signCount) }
    }

    static func flags(_ authenticatorData: [UInt8]) -> UInt8 { authenticatorData[32] }

    static func signCount(_ authenticatorData: [UInt8]) -> UInt32 {
        authenticatorData[33..<37].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    static func verifies(_ response: AuthenticationResponse, spki: [UInt8]) -> Bool {
        SignatureVerifier.verify(signature: response.result.signature,
                                 message: response.result.authenticatorData + SHA256.hash(response.clientDataJSON), spki: spki)
    }

    /// The packed attestation signature of a registration, checked over its (faulted) authData.
    static func attestationVerifies(_ response: RegistrationResponse) throws -> Bool {
        let object = try CBORValue.decode(response.result.attestationObject.bytes)
        let authData = try #require(object[.text("authData")]?.bytesValue)
        guard let sig = object[.text("attStmt")]?[.text("sig")]?.bytesValue else { return false }
        return SignatureVerifier.verify(signature: sig, message: authData + SHA256.hash(response.clientDataJSON),
                                        spki: response.result.publicKeySPKI)
    }

    // MARK: - UV: asked exactly when it should be, reported exactly when it was checked

    /// Registration: UV=1 exactly when the PIN was checked, and it is checked for `required`, and
    /// for `preferred` when the device can verify.
    @Test(arguments: [(UserVerificationRequirement.required, true, true), (.preferred, true, true),
                      (.preferred, false, false), (.discouraged, true, false)])
    func registrationReportsUVExactlyWhenThePINWasChecked(_ uv: UserVerificationRequirement, canVerify: Bool,
                                                          verified: Bool) throws {
        let harness = Harness()
        harness.user.canVerify = canVerify
        let response = try harness.register(uv)
        #expect(harness.user.verifications == (verified ? 1 : 0))
        #expect(Self.flags(response.result.authenticatorData) & Self.uv == (verified ? Self.uv : 0))
        #expect(harness.user.presences == 1 && Self.flags(response.result.authenticatorData) & Self.up == Self.up)
        #expect(harness.store.stored.first?.0.requiresUserVerification == verified)
    }

    /// Sign-in: the same, and a passkey made with UV is verified even when the RP discourages it
    /// (its key is sealed under the biometry key).
    @Test(arguments: [(UserVerificationRequirement.required, false, true), (.preferred, false, true),
                      (.discouraged, false, false), (.discouraged, true, true), (.required, true, true)])
    func signInReportsUVExactlyWhenThePINWasChecked(_ uv: UserVerificationRequirement, madeWithUV: Bool,
                                                    verified: Bool) throws {
        let harness = Harness()
        _ = try harness.register(madeWithUV ? .required : .discouraged)
        let before = harness.user.verifications
        let response = try harness.sign(uv)
        #expect(harness.user.verifications - before == (verified ? 1 : 0))
        #expect(Self.flags(response.result.authenticatorData) & Self.uv == (verified ? Self.uv : 0))
        #expect(Self.flags(response.result.authenticatorData) & Self.up == Self.up)
    }

    /// The PIN is really checked whenever the request asks for UV, even for a passkey whose key
    /// does not need it (made without UV): a wrong PIN fails the ceremony instead of a UV=1 answer.
    @Test(arguments: [UserVerificationRequirement.required, .preferred])
    func aWrongPINFailsEveryRequestThatAsksForUV(_ uv: UserVerificationRequirement) throws {
        let harness = Harness(.init(signCounter: .perCredential))
        _ = try harness.register(.discouraged)
        harness.user.wrongPIN = true
        expectAuthenticatorError(.failed) { try harness.sign(uv) }
        #expect(harness.user.verifications == 1)
        #expect(harness.storedCounts == [0])  // no signature was made
        expectAuthenticatorError(.failed) { try harness.register(uv, userId: [7]) }
        #expect(harness.store.stored.count == 1)
        // A request that does not ask is not asked, so a wrong PIN cannot matter.
        let signed = try harness.sign(.discouraged)
        #expect(Self.flags(signed.result.authenticatorData) & Self.uv == 0 && harness.user.verifications == 2)
    }

    // MARK: - UP, BE, BS, AT, ED

    @Test func presenceIsAskedAndReportedForEveryModalCeremonyAndNotForAConditionalCreate() throws {
        let harness = Harness()
        let modal = try harness.register(.preferred)
        #expect(Self.flags(modal.result.authenticatorData) & Self.up == Self.up && harness.user.presences == 1)
        _ = try harness.sign(.discouraged)  // made with UV: verified again
        #expect(harness.user.presences == 2 && harness.user.verifications == 2)
        // An automatic upgrade asks nothing and says so: UP=0, UV=0 (WebAuthn L3 §5.1.3 conditional).
        let upgrade = try harness.register(.preferred, userId: [9], caller: CallerContext(
            origin: Self.origin, mediation: .conditional, recentPasswordSignIn: true))
        #expect(Self.flags(upgrade.result.authenticatorData) & (Self.up | Self.uv) == 0)
        #expect(harness.user.presences == 2 && harness.user.verifications == 2)
    }

    @Test(arguments: [(true, true), (true, false), (false, false)])
    func backupFlagsFollowTheConfigurationInBothCeremonies(eligible: Bool, state: Bool) throws {
        let harness = Harness(.init(backupEligible: eligible, backupState: state))
        let expected = (eligible ? Self.be : 0) | (state ? Self.bs : 0)
        let made = try harness.register(.discouraged)
        #expect(Self.flags(made.result.authenticatorData) & (Self.be | Self.bs) == expected)
        let signed = try harness.sign(.discouraged)
        #expect(Self.flags(signed.result.authenticatorData) & (Self.be | Self.bs) == expected)
    }

    /// BS comes from the passkey's own state as the store holds it now (a synced keychain sets it
    /// once the first upload landed), not from the configuration or from BE.
    @Test func backupStateIsThePasskeysOwn() throws {
        let harness = Harness(.init(backupEligible: true, backupState: false))
        let made = try harness.register(.discouraged)
        let credential = made.result.credential
        var uploaded = credential
        uploaded.backupState = true
        let reloaded = Harness(.init(backupEligible: true, backupState: false))
        try reloaded.store.save(uploaded, privateKey: harness.store.stored[0].1, replacing: [], verification: nil)
        #expect(Self.flags(try harness.sign(.discouraged).result.authenticatorData) & (Self.be | Self.bs) == Self.be)
        #expect(Self.flags(try reloaded.sign(.discouraged).result.authenticatorData) & (Self.be | Self.bs) == Self.be | Self.bs)
    }

    @Test func attestedDataIsInRegistrationsOnlyAndExtensionDataExactlyWhenThereAreOutputs() throws {
        let harness = Harness()
        let plain = try harness.register(.discouraged)
        let plainData = try AuthenticatorData(parsing: plain.result.authenticatorData)
        #expect(Self.flags(plain.result.authenticatorData) & (Self.at | Self.ed) == Self.at)
        #expect(plainData.attestedCredentialData?.credentialId == plain.result.credential.id && plainData.extensions == nil)
        let extended = try harness.register(.discouraged, userId: [5]) {
            $0["extensions"] = ["credProtect": 2, "credBlob": Base64URL.encode([1, 2, 3])]
        }
        let extendedData = try AuthenticatorData(parsing: extended.result.authenticatorData)
        #expect(Self.flags(extended.result.authenticatorData) & (Self.at | Self.ed) == Self.at | Self.ed)
        #expect(extendedData.extensions != nil && extendedData.attestedCredentialData != nil)

        let signed = try harness.sign(.discouraged, allow: [extended.result.credential.id])
        #expect(Self.flags(signed.result.authenticatorData) & (Self.at | Self.ed) == 0)
        #expect(signed.result.authenticatorData.count == 37)
        let withBlob = try harness.sign(.discouraged, allow: [extended.result.credential.id]) { $0["extensions"] = ["getCredBlob": true] }
        #expect(Self.flags(withBlob.result.authenticatorData) & (Self.at | Self.ed) == Self.ed)
        #expect(try AuthenticatorData(parsing: withBlob.result.authenticatorData).extensions == .map([(.text("credBlob"), .bytes([1, 2, 3]))]))
    }

    // MARK: - Sign counts

    @Test func aCountingPasskeyCountsUpAndAFaultedOrFailedSignInMovesNothing() throws {
        let harness = Harness(.init(signCounter: .perCredential))
        let made = try harness.register(.required)
        #expect(Self.signCount(made.result.authenticatorData) == 0)
        #expect(Self.signCount(try harness.sign(.required).result.authenticatorData) == 1)
        for fault in Fault.allCases where fault.applies(to: .authentication) {
            _ = try harness.sign(.required, fault: fault)
            #expect(harness.storedCounts == [1], "\(fault)")
        }
        harness.user.wrongPIN = true
        expectAuthenticatorError(.failed) { try harness.sign(.required) }
        harness.user.wrongPIN = false
        #expect(Self.signCount(try harness.sign(.required).result.authenticatorData) == 2 && harness.storedCounts == [2])
    }

    // MARK: - Faults, each under the request that makes it matter

    /// UV-required registration and sign-in: the PIN is checked, UV=0, and the signature (the
    /// packed attestation's, the assertion's) is good over the faulted data.
    @Test func uvClearedChecksThePINReportsUV0AndSignsCorrectly() throws {
        let harness = Harness(.init(profile: .authctl, signCounter: .perCredential))
        let made = try harness.register(.required, fault: .uvCleared) { $0["attestation"] = "direct" }
        #expect(harness.user.verifications == 1)
        #expect(Self.flags(made.result.authenticatorData) & (Self.up | Self.uv) == Self.up)
        #expect(try Self.attestationVerifies(made))
        #expect(harness.store.stored.isEmpty)  // a faulted registration stores nothing

        let honest = try harness.register(.required)
        let spki = honest.result.publicKeySPKI
        let signed = try harness.sign(.required, fault: .uvCleared)
        #expect(harness.user.verifications == 3)
        #expect(Self.flags(signed.result.authenticatorData) & (Self.up | Self.uv) == Self.up)
        #expect(Self.verifies(signed, spki: spki))
        #expect(Self.signCount(signed.result.authenticatorData) == 1 && harness.storedCounts == [0])

        // With a wrong PIN there is no response at all, faulted or not.
        harness.user.wrongPIN = true
        expectAuthenticatorError(.failed) { try harness.sign(.required, fault: .uvCleared) }
    }

    /// Without user verification UV is 0 anyway: the fault is refused before anyone is asked.
    @Test func uvClearedIsRefusedForARequestThatVerifiesNoUser() throws {
        let harness = Harness()
        expectAuthenticatorError(.faultNotApplicable) { try harness.register(.discouraged, fault: .uvCleared) }
        _ = try harness.register(.discouraged)
        let asked = harness.user.presences
        expectAuthenticatorError(.faultNotApplicable) { try harness.sign(.discouraged, fault: .uvCleared) }
        #expect(harness.user.presences == asked && harness.user.verifications == 0)
        harness.user.canVerify = false
        expectAuthenticatorError(.faultNotApplicable) { try harness.sign(.preferred, fault: .uvCleared) }
    }

    /// UV-required: presence is still asked and the PIN checked; only UP is 0, correctly signed.
    @Test func upClearedUnderAUVRequiredRequestKeepsUVAndTheSignature() throws {
        let harness = Harness(.init(profile: .authctl))
        let made = try harness.register(.required, fault: .upCleared) { $0["attestation"] = "direct" }
        #expect(Self.flags(made.result.authenticatorData) & (Self.up | Self.uv) == Self.uv)
        #expect(try Self.attestationVerifies(made))
        let honest = try harness.register(.required)
        let signed = try harness.sign(.required, fault: .upCleared)
        #expect(Self.flags(signed.result.authenticatorData) & (Self.up | Self.uv) == Self.uv)
        #expect(Self.verifies(signed, spki: honest.result.publicKeySPKI))
        #expect(harness.user.presences == 3 && harness.user.verifications == 3)
    }

    /// UV-required, with a passkey whose key does not need the PIN: no PIN is checked, UV=1 is
    /// claimed after signing, so the signature fails over what is sent and verifies over UV=0.
    @Test func uvClaimedWithoutCheckUnderAUVRequiredRequestChecksNoPIN() throws {
        let harness = Harness()
        let made = try harness.register(.discouraged)
        let signed = try harness.sign(.required, fault: .uvClaimedWithoutCheck)
        #expect(harness.user.verifications == 0)
        #expect(Self.flags(signed.result.authenticatorData) & Self.uv == Self.uv)
        #expect(!Self.verifies(signed, spki: made.result.publicKeySPKI))
        var unclaimed = signed.result.authenticatorData
        unclaimed[32] &= ~Self.uv
        #expect(SignatureVerifier.verify(signature: signed.result.signature, message: unclaimed + SHA256.hash(signed.clientDataJSON),
                                         spki: made.result.publicKeySPKI))
        // A wrong PIN changes nothing: it is never asked.
        harness.user.wrongPIN = true
        _ = try harness.sign(.required, fault: .uvClaimedWithoutCheck)
        #expect(harness.user.verifications == 0)
    }

    /// The faults that break one part of a UV-required response: only that part, the rest as an
    /// honest response (UP and UV set, the PIN checked, the signature good where it should be).
    @Test(arguments: [Fault.wrongRpIdHash, .wrongChallenge, .wrongOrigin, .lookAlikeOrigin, .subdomainOrigin, .httpOrigin, .otherPortOrigin,
                      .wrongType, .badSignature])
    func aFaultUnderAUVRequiredSignInBreaksOnlyWhatItNames(_ fault: Fault) throws {
        let harness = Harness()
        let made = try harness.register(.required)
        let signed = try harness.sign(.required, fault: fault)
        let clientData = String(decoding: signed.clientDataJSON, as: UTF8.self)
        #expect(Self.flags(signed.result.authenticatorData) & (Self.up | Self.uv) == Self.up | Self.uv)
        #expect(harness.user.verifications == 2)
        #expect(Self.verifies(signed, spki: made.result.publicKeySPKI) == (fault != .badSignature))
        #expect((Array(signed.result.authenticatorData.prefix(32)) == SHA256.hash(Array("example.com".utf8))) == (fault != .wrongRpIdHash))
        #expect(clientData.contains(#""challenge":"BAUG""#) == (fault != .wrongChallenge))
        #expect(clientData.contains(#""origin":"https://login.example.com""#) == !Self.originFaults.contains(fault))
        #expect(clientData.contains(#""origin":"\#(Self.faultedOrigin[fault] ?? "-")""#) == Self.faultedOrigin.keys.contains(fault))
        #expect(clientData.contains(#""type":"webauthn.get""#) == (fault != .wrongType))
    }

    @Test(arguments: [Fault.wrongRpIdHash, .wrongChallenge, .wrongOrigin, .lookAlikeOrigin, .subdomainOrigin, .httpOrigin, .otherPortOrigin,
                      .wrongType, .badSignature, .badCBOR])
    func aFaultUnderAUVRequiredRegistrationBreaksOnlyWhatItNames(_ fault: Fault) throws {
        let harness = Harness(.init(profile: .authctl))
        let made = try harness.register(.required, fault: fault) { $0["attestation"] = "direct" }
        #expect(harness.user.verifications == 1 && harness.store.stored.isEmpty)
        let clientData = String(decoding: made.clientDataJSON, as: UTF8.self)
        #expect(clientData.contains(#""challenge":"AAEC""#) == (fault != .wrongChallenge))
        #expect(clientData.contains(#""origin":"https://login.example.com""#) == !Self.originFaults.contains(fault))
        #expect(clientData.contains(#""origin":"\#(Self.faultedOrigin[fault] ?? "-")""#) == Self.faultedOrigin.keys.contains(fault))
        #expect(clientData.contains(#""type":"webauthn.create""#) == (fault != .wrongType))
        guard fault != .badCBOR else {
            #expect(throws: (any Error).self) { try CBORValue.decode(made.result.attestationObject.bytes) }
            return
        }
        #expect(try Self.attestationVerifies(made) == (fault != .badSignature))
        #expect(Self.flags(made.result.authenticatorData) & (Self.up | Self.uv) == Self.up | Self.uv)
        #expect((Array(made.result.authenticatorData.prefix(32)) == SHA256.hash(Array("example.com".utf8))) == (fault != .wrongRpIdHash))
    }

    /// A UV-required sign-in with a counting passkey that has signed: the count goes below the
    /// last one, correctly signed, the PIN checked; the stored count does not move.
    @Test func counterRegressUnderAUVRequiredSignIn() throws {
        let harness = Harness(.init(signCounter: .perCredential))
        let made = try harness.register(.required)
        expectAuthenticatorError(.faultNotApplicable) { try harness.sign(.required, fault: .counterRegress) }  // has not signed
        #expect(harness.user.verifications == 1)
        _ = try harness.sign(.required)
        _ = try harness.sign(.required)
        let regressed = try harness.sign(.required, fault: .counterRegress)
        #expect(Self.signCount(regressed.result.authenticatorData) == 1 && harness.storedCounts == [2])
        #expect(Self.flags(regressed.result.authenticatorData) & (Self.up | Self.uv) == Self.up | Self.uv)
        #expect(Self.verifies(regressed, spki: made.result.publicKeySPKI))
    }

    /// The faults that change the origin, and the origin each writes for https://login.example.com.
    static let originFaults: Set<Fault> = [.wrongOrigin, .lookAlikeOrigin, .subdomainOrigin, .httpOrigin, .otherPortOrigin]
    static let faultedOrigin: [Fault: String] = [.lookAlikeOrigin: "https://evil-login.example.com", .subdomainOrigin: "https://login.login.example.com",
                                                 .httpOrigin: "http://login.example.com", .otherPortOrigin: "https://login.example.com:8443"]

    /// Every fault has a test above; a new one must get its own.
    @Test func everyFaultIsCoveredHere() {
        #expect(Set(Fault.allCases) == [.badSignature, .wrongRpIdHash, .wrongChallenge, .wrongOrigin, .lookAlikeOrigin, .subdomainOrigin, .httpOrigin,
                                        .otherPortOrigin, .wrongType,
                                        .upCleared, .uvCleared, .uvClaimedWithoutCheck, .counterRegress, .badCBOR])
    }
}
