import Foundation
import Testing
@testable import VirtualAuthenticator

/// The client rules where headless Chromium 156's own client answers (docs/conformance.md):
/// credProtect consistency, extensions a ceremony does not take, allow-list transports, the
/// excludeList and credProtect, unsupported algorithms, mediation and uiMode, and the options
/// Chromium accepts that an RP should not send.
@Suite struct BrowserRulesTests {
    static let origin = "https://example.com"

    /// A user who answers every prompt and records what was asked, and how often a call was left
    /// pending until its timeout.
    final class RecordingUser: UserInteraction {
        var prompts: [UserPrompt] = []
        var verifications = 0
        var outwaited: [UserPrompt] = []
        var canVerify: Bool { true }
        func selectAccount(from candidates: AccountCandidates, for prompt: UserPrompt) throws(AuthenticatorError) -> Credential {
            candidates.newest
        }
        func confirmPresence(_ prompt: UserPrompt) throws(AuthenticatorError) { prompts.append(prompt) }
        func verifyUser(_ prompt: UserPrompt) throws(AuthenticatorError) -> ScriptedUser.Verified {
            verifications += 1
            return ScriptedUser.Verified()
        }
        func outwait(_ prompt: UserPrompt) -> AuthenticatorError {
            outwaited.append(prompt)
            return AuthenticatorError(.timedOut, "pending until the timeout")
        }
    }

    struct Harness {
        let store = InMemoryCredentialStore()
        let user = RecordingUser()
        let client: WebAuthnClient<InMemoryCredentialStore, RecordingUser>

        init(configuration: AuthenticatorConfiguration = .init()) {
            client = WebAuthnClient(authenticator: Authenticator(configuration: configuration, store: store, user: user),
                                    suffixes: { PublicSuffixList(text: "com\n") })
        }

        func register(caller: CallerContext = CallerContext(origin: BrowserRulesTests.origin),
                      _ edit: (inout [String: Any]) -> Void = { _ in }) throws -> RegistrationResponse {
            try client.create(options: CreationOptions(json: jsonBytes(creationObject(edit)), strict: caller.strict), caller: caller)
        }

        func sign(caller: CallerContext = CallerContext(origin: BrowserRulesTests.origin),
                  _ edit: (inout [String: Any]) -> Void = { _ in }) throws -> AuthenticationResponse {
            try client.get(options: RequestOptions(json: jsonBytes(requestObject(edit)), strict: caller.strict), caller: caller)
        }
    }

    static func selection(_ uv: String) -> [String: Any] { ["userVerification": uv] }

    // MARK: 1, 2: credProtect

    @Test(arguments: ["preferred", "discouraged"], [false, true])
    func userVerificationRequiredPolicyNeedsRequiredUserVerification(uv: String, enforce: Bool) throws {
        let harness = Harness()
        expectAuthenticatorError(.notSupported) {
            try harness.register {
                $0["authenticatorSelection"] = Self.selection(uv)
                $0["extensions"] = ["credentialProtectionPolicy": "userVerificationRequired", "enforceCredentialProtectionPolicy": enforce]
            }
        }
        #expect(harness.store.stored.isEmpty && harness.user.prompts.isEmpty)
        // With userVerification required it is consistent, and the passkey is made at level 3.
        let made = try harness.register {
            $0["authenticatorSelection"] = Self.selection("required")
            $0["extensions"] = ["credentialProtectionPolicy": "userVerificationRequired", "enforceCredentialProtectionPolicy": enforce]
        }
        #expect(made.result.credential.credProtect == .userVerificationRequired)
    }

    @Test func anUnknownProtectionPolicyIsNotSupported() throws {
        let harness = Harness()
        for name in ["bogus", "userverificationrequired", ""] {
            expectAuthenticatorError(.notSupported) { try harness.register { $0["extensions"] = ["credentialProtectionPolicy": name] } }
        }
        #expect(harness.store.stored.isEmpty)
        // The lower levels need nothing of userVerification.
        let made = try harness.register {
            $0["authenticatorSelection"] = Self.selection("discouraged")
            $0["extensions"] = ["credentialProtectionPolicy": "userVerificationOptionalWithCredentialIDList"]
        }
        #expect(made.result.credential.credProtect == .userVerificationOptionalWithCredentialIDList)
    }

    // MARK: 3, 4: credProps and appid in a sign-in

    @Test func credPropsInASignInIsNotSupported() throws {
        let harness = Harness()
        _ = try harness.register()
        expectAuthenticatorError(.notSupported) { try harness.sign { $0["extensions"] = ["credProps": true] } }
        // `false` asks for nothing (Chromium signs).
        _ = try harness.sign { $0["extensions"] = ["credProps": false] }
    }

    @Test func appidInASignInIsAnsweredFalse() throws {
        let harness = Harness()
        _ = try harness.register()
        let response = try harness.sign { $0["extensions"] = ["appid": "https://example.com/appid.json"] }
        #expect(response.clientExtensionResults.appid == false)
        #expect(response.json.contains(#""clientExtensionResults":{"appid":false}"#))
        #expect(try harness.sign().clientExtensionResults.appid == nil)
    }

    @Test(arguments: ["x", "null", "https://", "https://exa mple.com/", "https://h:99999", "https://h:123456789012345678901", "1http://x", "http://a%zz"])
    func anAppidThatIsNoURLIsASyntaxError(appid: String) throws {
        let harness = Harness()
        _ = try harness.register()
        expectAuthenticatorError(.syntaxError) { try harness.sign { $0["extensions"] = ["appid": appid, "credProps": true] } }
        #expect(harness.user.prompts.count == 1)  // the registration's only
    }

    @Test(arguments: ["", "https://example.com/a", "https:example.com", " https://example.com\t ", "https://[::1]:443/x",
                      "https://u:p@h:0000443/", "http://a%41", "foo:bar", "file:///x"])
    func anAppidThatParsesAsAURLIsAccepted(appid: String) {
        #expect(appid.isEmpty || AppIDSyntax.isValidURL(appid))
    }

    // MARK: 5: allowCredentials transports

    @Test(arguments: [["usb", "nfc"], ["hybrid"], ["ble"], ["cable"], ["smart-card"], ["smart-card", "carrier-pigeon"]])
    func anAllowListThatDoesNotReachThePlatformAuthenticatorStaysPending(transports: [String]) throws {
        let harness = Harness()
        let id = try harness.register().result.credential.id
        expectAuthenticatorError(.timedOut) {
            try harness.sign { $0["allowCredentials"] = [["type": "public-key", "id": Base64URL.encode(id), "transports": transports]] }
        }
        #expect(harness.user.outwaited.count == 1)
        #expect(harness.user.prompts.count == 1)  // the registration's; the sign-in asked nothing
    }

    @Test(arguments: [[], ["internal"], ["usb", "internal"], ["hybrid", "internal"], ["carrier-pigeon"]])
    func anAllowListWithInternalOrNoKnownTransportStillSigns(transports: [String]) throws {
        let harness = Harness()
        let id = try harness.register().result.credential.id
        let response = try harness.sign {
            $0["allowCredentials"] = [["type": "public-key", "id": Base64URL.encode(id), "transports": transports]]
        }
        #expect(response.result.credential.id == id)
        #expect(harness.user.outwaited.isEmpty)
    }

    @Test func theUnionOfTheEntriesTransportsDecides() throws {
        let harness = Harness()
        let id = try harness.register().result.credential.id
        // The passkey's own entry says usb, another entry says internal: the platform is asked.
        let response = try harness.sign {
            $0["allowCredentials"] = [["type": "public-key", "id": Base64URL.encode(id), "transports": ["usb"]],
                                      ["type": "public-key", "id": "AAAA", "transports": ["internal"]]]
        }
        #expect(response.result.credential.id == id)
    }

    @Test func hybridReachesAnotherDeviceAndUSBASecurityKey() throws {
        // A device answering over hybrid (`--via`): only hybrid (or no transports) reaches it.
        let phone = Harness(configuration: AuthenticatorConfiguration(attachment: .crossPlatform))
        let id = try phone.register().result.credential.id
        let entry: ([String]) -> [String: Any] = { ["type": "public-key", "id": Base64URL.encode(id), "transports": $0] }
        #expect(try phone.sign { $0["allowCredentials"] = [entry(["hybrid"])] }.result.credential.id == id)
        expectAuthenticatorError(.timedOut) { try phone.sign { $0["allowCredentials"] = [entry(["internal"])] } }
        expectAuthenticatorError(.timedOut) { try phone.sign { $0["allowCredentials"] = [entry(["usb"])] } }
        // A security key is reached over its own transports.
        let key = Harness(configuration: AuthenticatorConfiguration(profile: try #require(AuthenticatorProfile.named("security-key"))))
        let keyId = try key.register().result.credential.id
        let keyEntry: ([String]) -> [String: Any] = { ["type": "public-key", "id": Base64URL.encode(keyId), "transports": $0] }
        #expect(try key.sign { $0["allowCredentials"] = [keyEntry(["usb"])] }.result.credential.id == keyId)
        expectAuthenticatorError(.timedOut) { try key.sign { $0["allowCredentials"] = [keyEntry(["internal"])] } }
    }

    // MARK: 6: excludeCredentials and credProtect

    @Test func aPasskeyMadeWithVerificationIsExcludedFromADiscouragedCreate() throws {
        let harness = Harness()
        let first = try harness.register { $0["authenticatorSelection"] = Self.selection("required") }
        #expect(first.result.credential.requiresUserVerification && first.result.credential.credProtect == nil)
        let verifications = harness.user.verifications
        expectAuthenticatorError(.matchedExcludedCredential) {
            try harness.register {
                $0["user"] = ["id": "CQk", "name": "alice", "displayName": "Alice"]
                $0["authenticatorSelection"] = Self.selection("discouraged")
                $0["excludeCredentials"] = [["type": "public-key", "id": Base64URL.encode(first.result.credential.id)]]
            }
        }
        #expect(harness.user.verifications == verifications)  // presence only, as the RP asked
        #expect(harness.store.stored.map(\.0.id) == [first.result.credential.id])
    }

    @Test func onlyCredProtectLevelThreeHidesAnExcludedPasskeyFromAnUnverifiedCreate() throws {
        let harness = Harness()
        let hidden = try harness.register {
            $0["authenticatorSelection"] = Self.selection("required")
            $0["extensions"] = ["credentialProtectionPolicy": "userVerificationRequired"]
        }
        let listed = try harness.register {
            $0["user"] = ["id": "BAUG", "name": "bob", "displayName": "Bob"]
            $0["authenticatorSelection"] = Self.selection("required")
            $0["extensions"] = ["credentialProtectionPolicy": "userVerificationOptionalWithCredentialIDList"]
        }
        let exclude: ([UInt8]) -> [[String: Any]] = { [["type": "public-key", "id": Base64URL.encode($0)]] }
        // Level 3 without UV: removed from the excludeList, so a new passkey is made (CTAP 2.1 §6.1.2 step 11).
        _ = try harness.register {
            $0["user"] = ["id": "BwgJ", "name": "carol", "displayName": "Carol"]
            $0["authenticatorSelection"] = Self.selection("discouraged")
            $0["excludeCredentials"] = exclude(hidden.result.credential.id)
        }
        // Level 3 with UV, and level 2 without: excluded.
        expectAuthenticatorError(.matchedExcludedCredential) {
            try harness.register {
                $0["user"] = ["id": "CgsM", "name": "dan", "displayName": "Dan"]
                $0["authenticatorSelection"] = Self.selection("required")
                $0["excludeCredentials"] = exclude(hidden.result.credential.id)
            }
        }
        expectAuthenticatorError(.matchedExcludedCredential) {
            try harness.register {
                $0["user"] = ["id": "DQ4P", "name": "eve", "displayName": "Eve"]
                $0["authenticatorSelection"] = Self.selection("discouraged")
                $0["excludeCredentials"] = exclude(listed.result.credential.id)
            }
        }
    }

    // MARK: 7: pubKeyCredParams

    @Test func unsupportedAlgorithmsAreTheAuthenticatorsRefusalBeforeAnExcludedMatch() throws {
        let harness = Harness()
        let first = try harness.register()
        let prompts = harness.user.prompts.count
        // Only public-key entries, none the profile makes: CTAP2_ERR_UNSUPPORTED_ALGORITHM, NotAllowedError.
        let unsupported = #expect(throws: AuthenticatorError.self) {
            try harness.register { $0["pubKeyCredParams"] = [["type": "public-key", "alg": -257], ["type": "public-key", "alg": -999]] }
        }
        #expect(unsupported?.code == .notHandled && unsupported?.code.domException == "NotAllowedError")
        // With an excluded match too: the algorithms are checked first (CTAP 2.1 §6.1.2 step 3
        // before step 11), and the user is asked nothing.
        expectAuthenticatorError(.notHandled) {
            try harness.register {
                $0["pubKeyCredParams"] = [["type": "public-key", "alg": -257]]
                $0["excludeCredentials"] = [["type": "public-key", "id": Base64URL.encode(first.result.credential.id)]]
            }
        }
        #expect(harness.user.prompts.count == prompts)
        // No entry of a supported type: the client's NotSupportedError, before any authenticator.
        expectAuthenticatorError(.notSupported) {
            try harness.register {
                $0["pubKeyCredParams"] = [["type": "password", "alg": -7]]
                $0["excludeCredentials"] = [["type": "public-key", "id": Base64URL.encode(first.result.credential.id)]]
            }
        }
        #expect(harness.user.prompts.count == prompts && harness.store.stored.count == 1)
        #expect(AuthenticatorError.Code.notSupported.ctapStatus == nil)
    }

    // MARK: 8, 9, 11: mediation and uiMode

    @Test func silentMediationSignsAndCreatesAsOptional() throws {
        let harness = Harness()
        let made = try harness.register(caller: CallerContext(origin: Self.origin, mediation: .silent))
        #expect(made.result.authenticatorData[32] & 0x01 == 0x01)  // user present: a prompt, as optional
        let signed = try harness.sign(caller: CallerContext(origin: Self.origin, mediation: .silent))
        #expect(signed.result.credential.id == made.result.credential.id)
    }

    @Test func aConditionalCreateWithoutARecentPasswordSignInStaysPending() throws {
        let harness = Harness()
        expectAuthenticatorError(.timedOut) { try harness.register(caller: CallerContext(origin: Self.origin, mediation: .conditional)) }
        #expect(harness.user.outwaited.map(\.ceremony) == [.registration])
        #expect(harness.user.prompts.isEmpty && harness.store.stored.isEmpty)
        _ = try harness.register(caller: CallerContext(origin: Self.origin, mediation: .conditional, recentPasswordSignIn: true))
        #expect(harness.store.stored.count == 1)
    }

    @Test func immediateIsNoMediationAnyMore() {
        #expect(Mediation(rawValue: "immediate") == nil)
        #expect(UIMode(rawValue: "immediate") == .immediate && UIMode(rawValue: "passive") == .passive)
    }

    @Test func immediateUIModeSignsLocallyOrFailsAtOnce() throws {
        let harness = Harness()
        let immediate = CallerContext(origin: Self.origin, uiMode: .immediate)
        expectAuthenticatorError(.notHandled) { try harness.sign(caller: immediate) }  // no passkey: at once
        #expect(harness.user.outwaited.isEmpty)
        let id = try harness.register().result.credential.id
        #expect(try harness.sign(caller: immediate).result.credential.id == id)
        // No allow list, no conditional mediation, and only after a user activation.
        expectAuthenticatorError(.notHandled) {
            try harness.sign(caller: immediate) { $0["allowCredentials"] = [["type": "public-key", "id": Base64URL.encode(id)]] }
        }
        var conditional = immediate
        conditional.mediation = .conditional
        expectAuthenticatorError(.notSupported) { try harness.sign(caller: conditional) }
        var inactive = immediate
        inactive.userActivation = false
        expectAuthenticatorError(.notHandled) { try harness.sign(caller: inactive) }
    }

    @Test func immediateUIModeNeverAnswersOverHybridButAfterTheOptionsChecks() throws {
        // An authenticator reached over hybrid (a phone for a laptop's browser) has no passkey for
        // immediate sign-in to offer; the options' own refusals come first, as in the browser.
        let phone = Harness(configuration: AuthenticatorConfiguration(attachment: .crossPlatform))
        _ = try phone.register()
        let immediate = CallerContext(origin: Self.origin, uiMode: .immediate)
        expectAuthenticatorError(.notHandled) { try phone.sign(caller: immediate) }
        expectAuthenticatorError(.securityError) { try phone.sign(caller: immediate) { $0["rpId"] = "evil.example" } }
        expectAuthenticatorError(.notSupported) { try phone.sign(caller: immediate) { $0["extensions"] = ["credProps": true] } }
        #expect(phone.user.prompts.count == 1)  // the registration's: no sign-in asked the user
        // A security key's profile is cross-platform but local to the browser: it signs.
        let key = Harness(configuration: AuthenticatorConfiguration(profile: try #require(AuthenticatorProfile.named("security-key"))))
        let id = try key.register().result.credential.id
        #expect(try key.sign(caller: immediate).result.credential.id == id)
    }

    @Test func ambientSignInIsConditional() throws {
        let harness = Harness()
        let ambient = CallerContext(origin: Self.origin, mediation: .conditional, uiMode: .passive)
        expectAuthenticatorError(.timedOut) { try harness.sign(caller: ambient) }  // nothing to offer: pending
        let id = try harness.register().result.credential.id
        #expect(try harness.sign(caller: ambient).result.credential.id == id)
    }

    @Test func capabilitiesReportImmediateAndAmbientSignIn() {
        let platform = ClientCapabilities(supported: true, platform: true, userVerifying: true, hybrid: false)
        #expect(platform["immediateGet"] == true && platform["ambientGet"] == true)
        let key = ClientCapabilities(supported: true, platform: false, userVerifying: false, hybrid: false)
        #expect(key["immediateGet"] == false && key["ambientGet"] == false)
        #expect(platform.values.map(\.key).prefix(11) == ["ambientGet", "conditionalCreate", "conditionalGet", "hybridTransport", "immediateGet",
                                                          "passkeyPlatformAuthenticator", "relatedOrigins", "signalAllAcceptedCredentials",
                                                          "signalCurrentUserDetails", "signalUnknownCredential", "userVerifyingPlatformAuthenticator"])
    }

    // MARK: 10: prf evalByCredential

    @Test func anEvalByCredentialKeyNotAllowedIsASyntaxError() throws {
        let harness = Harness()
        let id = try harness.register().result.credential.id
        for key in ["AAAA", "", "a+b/"] {
            let error = #expect(throws: AuthenticatorError.self) {
                try harness.sign {
                    $0["allowCredentials"] = [["type": "public-key", "id": Base64URL.encode(id)]]
                    $0["extensions"] = ["prf": ["evalByCredential": [key: ["first": "AQ"]]]]
                }
            }
            #expect(error?.code == .syntaxError && error?.code.domException == "SyntaxError")
        }
    }

    // MARK: 12: what Chromium accepts, with a warning

    @Test func anEmptyChallengeAndUserIdAreAcceptedWithWarnings() throws {
        let harness = Harness()
        let made = try harness.register {
            $0["challenge"] = ""
            $0["user"] = ["id": "", "name": "a", "displayName": "A"]
        }
        #expect(made.result.credential.userHandle.isEmpty)
        #expect(made.warnings.count == 2)
        #expect(made.warnings.contains { $0.contains("options.challenge is empty") && $0.contains("replay") })
        #expect(made.warnings.contains { $0.contains("options.user.id is empty") })
        let clientData = try JSONSerialization.jsonObject(with: Data(made.clientDataJSON)) as? [String: Any]
        #expect(clientData?["challenge"] as? String == "")
        let signed = try harness.sign { $0["challenge"] = "" }
        #expect(signed.warnings.count == 1 && signed.warnings[0].contains("replay"))
        // An empty user handle is left out of the response, as Chromium 156 leaves it out.
        #expect(!signed.json.contains("userHandle") && !JSONOutput.string(signed).contains("userHandle"))
        #expect(try harness.sign().warnings.isEmpty)
    }

    @Test func nonZeroTrailingBitsAreReadAsTheCanonicalBytes() throws {
        let harness = Harness()
        let made = try harness.register { $0["challenge"] = "AB" }
        #expect(String(decoding: made.clientDataJSON, as: UTF8.self).contains(#""challenge":"AA""#))
        #expect(made.warnings.count == 1 && made.warnings[0].contains("'AB'") && made.warnings[0].contains("'AA'"))
        let signed = try harness.sign { $0["challenge"] = "AAEB" }  // 00 01 01 → "AAEB" is canonical
        #expect(signed.warnings.isEmpty)
        let lenient = try harness.sign { $0["challenge"] = "AAF" }  // two bytes 00 01, then non-zero bits
        #expect(String(decoding: lenient.clientDataJSON, as: UTF8.self).contains(#""challenge":"AAE""#))
        #expect(Base64URL.decodeIgnoringTrailingBits("AB") == [0] && Base64URL.decodeStrict("AB") == nil)
        #expect(Base64URL.decodeIgnoringTrailingBits("A") == nil && Base64URL.decodeIgnoringTrailingBits("A+") == nil)
    }

    @Test func strictKeepsTheRefusals() {
        let harness = Harness()
        let strict = CallerContext(origin: Self.origin, strict: true)
        expectAuthenticatorError(.badInput) { try harness.register(caller: strict) { $0["challenge"] = "" } }
        expectAuthenticatorError(.badInput) { try harness.register(caller: strict) { $0["user"] = ["id": "", "name": "a", "displayName": "A"] } }
        expectAuthenticatorError(.encodingError) { try harness.register(caller: strict) { $0["challenge"] = "AB" } }
        expectAuthenticatorError(.badInput) { try harness.sign(caller: strict) { $0["challenge"] = "" } }
        expectAuthenticatorError(.encodingError) { try harness.sign(caller: strict) { $0["challenge"] = "AB" } }
        #expect(harness.store.stored.isEmpty)
    }
}
