import Foundation
import Testing
@testable import VirtualAuthenticator

/// prf over hmac-secret, largeBlob, credProtect, credBlob and minPinLength (docs/extensions.md).
/// The pinned values were computed independently with Python (`hashlib`, `hmac`, and the
/// `cryptography` package's HKDF and AESGCM) from the same inputs.
@Suite struct ExtensionTests {
    /// A fixed P-256 key (private scalar 0x1234…cdef ×4), DER `ECPrivateKey` as the vault seals it.
    static let fixedKeyDER = hexBytes(
        "307702010104201234567890abcdef1234567890abcdef1234567890abcdef1234567890abcdefa00a06082a8648ce3d030107a14403420004"
        + "471c3e758c4904285bba7e53118ed0f524adeb0757d25bd2f8e7b0d76dfa714cdd520f7aca8a8b917acc37f51de8f0c9bbe3ad858382e702dc25a12d09f7a858")

    static func fixedKey() throws -> PrivateKey {
        try fixedKeyDER.withUnsafeBytes { try PrivateKey.load(der: $0) }
    }

    // MARK: - Primitives against published vectors

    @Test func hmacSHA256MatchesRFC4231() {
        #expect(HMACSHA256.mac(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
                == hexBytes("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"))
    }

    @Test func hkdfSHA256MatchesRFC5869() throws {
        let okm = try HKDFSHA256.derive(ikm: [UInt8](repeating: 0x0b, count: 22), salt: Array(0x00...0x0c),
                                        info: Array(0xf0...0xf9), length: 42)
        #expect(okm == hexBytes("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"))
    }

    @Test func aesGCMSealsAsPythonDoesAndRefusesTampering() throws {
        let key = Array(UInt8(0)..<32), nonce = Array(UInt8(0)..<12)
        let ad = LargeBlob.associatedData(length: 5)
        #expect(ad == Array("blob".utf8) + [5, 0, 0, 0, 0, 0, 0, 0])
        let sealed = try AES256GCM.seal(Array("hello".utf8), key: key, nonce: nonce, associatedData: ad)
        #expect(sealed == hexBytes("2f67ba77aa16beadd27bc83be5fcc2b6d4b2db6557"))
        #expect(AES256GCM.open(sealed, key: key, nonce: nonce, associatedData: ad) == Array("hello".utf8))
        var tampered = sealed
        tampered[0] ^= 1
        #expect(AES256GCM.open(tampered, key: key, nonce: nonce, associatedData: ad) == nil)
        #expect(AES256GCM.open(sealed, key: key, nonce: nonce, associatedData: LargeBlob.associatedData(length: 6)) == nil)
    }

    // MARK: - PRF

    @Test func prfSaltIsSHA256OfTheLabelledInput() {
        #expect(HMACSecret.salt(forPRFInput: [1, 2, 3]) == hexBytes("c1aa8b577876742a1980a73b15f72275d7104fdaa192c76c0400bb306bf21292"))
    }

    @Test func hmacSecretOutputsMatchAnIndependentComputation() throws {
        let key = try Self.fixedKey()
        let salts = PRFValues(first: HMACSecret.salt(forPRFInput: [1, 2, 3]), second: HMACSecret.salt(forPRFInput: [1, 2, 3]))
        let withUV = try HMACSecret.evaluate(salts, key: key, userVerified: true)
        let withoutUV = try HMACSecret.evaluate(salts, key: key, userVerified: false)
        #expect(withUV.first == hexBytes("883bbb3dcbc841c961716162d068be30f9bbe80a436b34e5ddac5d1e315ddf59"))
        #expect(withoutUV.first == hexBytes("155566a6087c9d3c467ab63ec8906d720a0b75ccdb4c886ee7693c9c9da7364a"))
        #expect(withUV.second == withUV.first && withoutUV.second == withoutUV.first)
        #expect(try LargeBlob.key(of: key) == hexBytes("0addeb3342f28b8405553f0ee667b3c81ca348ee8567dbd003741a6d13f03a83"))
    }

    @Test(arguments: [COSEAlgorithm.es256, .edDSA, .rs256])
    func credentialSecretsSurviveTheVaultRoundTrip(algorithm: COSEAlgorithm) throws {
        // What the store seals is what a later sign-in loads: both must derive the same secrets.
        let key = try PrivateKey.generate(algorithm)
        var der = [UInt8](repeating: 0, count: key.privateKeyDERCount)
        let count = try der.withUnsafeMutableBytes { try key.writePrivateKeyDER(into: $0) }
        let loaded = try der.prefix(count).withUnsafeBytes { try PrivateKey.load(der: $0) }
        for verified in [true, false] {
            #expect(try HMACSecret.credRandom(of: key, userVerified: verified) == HMACSecret.credRandom(of: loaded, userVerified: verified))
        }
        #expect(try HMACSecret.credRandom(of: key, userVerified: true) != HMACSecret.credRandom(of: key, userVerified: false))
        #expect(try LargeBlob.key(of: key) == LargeBlob.key(of: loaded))
    }

    private struct Harness {
        let store = InMemoryCredentialStore()
        let client: WebAuthnClient<InMemoryCredentialStore, ScriptedUser>

        init(configuration: AuthenticatorConfiguration = .init()) {
            client = WebAuthnClient(authenticator: Authenticator(configuration: configuration, store: store, user: ScriptedUser()),
                                    suffixes: { PublicSuffixList(text: "com\n") })
        }

        func register(uv: String = "discouraged", userId: String = "AQID", _ extensions: [String: Any]) throws -> RegistrationResponse {
            try client.create(options: CreationOptions(json: jsonBytes(creationObject {
                $0["user"] = ["id": userId, "name": "alice", "displayName": "Alice"]
                $0["authenticatorSelection"] = ["userVerification": uv]
                $0["extensions"] = extensions
            })), origin: "https://example.com")
        }

        func sign(uv: String = "discouraged", allow: [[UInt8]] = [], _ extensions: [String: Any]) throws -> AuthenticationResponse {
            try client.get(options: RequestOptions(json: jsonBytes(requestObject {
                $0["userVerification"] = uv
                $0["allowCredentials"] = allow.map { ["type": "public-key", "id": Base64URL.encode($0)] }
                $0["extensions"] = extensions
            })), origin: "https://example.com")
        }
    }

    private static func eval(_ first: [UInt8], _ second: [UInt8]? = nil) -> [String: Any] {
        var values: [String: Any] = ["first": Base64URL.encode(first)]
        if let second { values["second"] = Base64URL.encode(second) }
        return ["eval": values]
    }

    /// One PRF per credential, the with-UV one, whatever the ceremony verified (§10.1.4).
    @Test func prfThroughTheClientIsTheVerifiedUsersPRFAlways() throws {
        let harness = Harness()
        let made = try harness.register(["prf": [String: Any]()])
        #expect(made.clientExtensionResults.prf == .init(enabled: true, results: nil))
        let data = try AuthenticatorData(parsing: made.result.authenticatorData)
        #expect(data.extensions == .map([(.text("hmac-secret"), .bool(true))]))

        let key = try harness.store.privateKey(for: made.result.credential, verification: nil)
        let salt = HMACSecret.salt(forPRFInput: [9])
        func first(_ uv: String) throws -> String? {
            try harness.sign(uv: uv, ["prf": Self.eval([9])]).clientExtensionResults.prf?.results?.first
        }
        let plain = try first("discouraged"), verified = try first("required")
        let expected = Base64URL.encode(HMACSHA256.mac(key: try HMACSecret.credRandom(of: key, userVerified: true), message: salt))
        #expect(plain == expected && verified == expected)
        #expect(plain != Base64URL.encode(HMACSHA256.mac(key: try HMACSecret.credRandom(of: key, userVerified: false), message: salt)))
    }

    @Test func prfClientRules() throws {
        let harness = Harness()
        let id = try harness.register(["prf": [String: Any]()]).result.credential.id
        let byCredential: [String: Any] = ["evalByCredential": [Base64URL.encode(id): ["first": "AQ"]]]
        expectAuthenticatorError(.notSupported) { try harness.sign(["prf": byCredential]) }
        expectAuthenticatorError(.syntaxError) { try harness.sign(allow: [id], ["prf": ["evalByCredential": ["AAAA": ["first": "AQ"]]]]) }
        expectAuthenticatorError(.syntaxError) { try harness.sign(allow: [id], ["prf": ["evalByCredential": ["": ["first": "AQ"]]]]) }
        expectAuthenticatorError(.notSupported) { try harness.register(userId: "BA", ["prf": byCredential]) }
        let specific = try harness.sign(allow: [id], ["prf": byCredential.merging(Self.eval([2])) { a, _ in a }])
        let general = try harness.sign(allow: [id], ["prf": Self.eval([1])])
        #expect(specific.clientExtensionResults.prf?.results?.first == general.clientExtensionResults.prf?.results?.first)
    }

    // MARK: - credProtect, credBlob, largeBlob, minPinLength

    @Test func credProtectFiltersDiscovery() throws {
        let harness = Harness()
        let required = try harness.register(uv: "required", userId: "AQ", ["credentialProtectionPolicy": "userVerificationRequired"])
        let listed = try harness.register(userId: "Ag", ["credentialProtectionPolicy": "userVerificationOptionalWithCredentialIDList"])
        #expect(try AuthenticatorData(parsing: required.result.authenticatorData).extensions == .map([(.text("credProtect"), .int(3))]))
        #expect(harness.store.stored.map(\.0.credProtect) == [.userVerificationRequired, .userVerificationOptionalWithCredentialIDList])

        expectAuthenticatorError(.notHandled) { try harness.sign([:]) }
        expectAuthenticatorError(.notHandled) { try harness.sign(allow: [required.result.credential.id], [:]) }
        #expect(try harness.sign(allow: [listed.result.credential.id], [:]).result.credential.id == listed.result.credential.id)
        // With UV both are there; the picker offers the newest.
        #expect(try harness.sign(uv: "required", [:]).result.credential.id == listed.result.credential.id)
        #expect(try harness.sign(uv: "required", allow: [required.result.credential.id], [:]).result.credential.id == required.result.credential.id)
    }

    @Test func credBlobAndMinPinLength() throws {
        let harness = Harness(configuration: .init(minimumPINLength: 6))
        let made = try harness.register(["credBlob": Base64URL.encode([1, 2, 3]), "minPinLength": true])
        #expect(try AuthenticatorData(parsing: made.result.authenticatorData).extensions
                == .map([(.text("credBlob"), .bool(true)), (.text("minPinLength"), .int(6))]))
        #expect(made.clientExtensionResults.credBlob == true)
        let used = try harness.sign(["getCredBlob": true])
        #expect(try AuthenticatorData(parsing: used.result.authenticatorData).extensions == .map([(.text("credBlob"), .bytes([1, 2, 3]))]))
        #expect(used.clientExtensionResults.getCredBlob == "AQID")
    }

    @Test func largeBlobIsSealedInTheStore() throws {
        let harness = Harness()
        let id = try harness.register(["largeBlob": ["support": "required"]]).result.credential.id
        let written = try harness.sign(allow: [id], ["largeBlob": ["write": Base64URL.encode(Array("secret".utf8))]])
        #expect(written.clientExtensionResults.largeBlob == .init(written: true))
        let sealed = try #require(harness.store.stored.first?.0.largeBlob)
        #expect(sealed.count == 12 + 6 + 16 && !sealed.contains(Array("secret".utf8)))
        let read = try harness.sign(["largeBlob": ["read": true]])
        #expect(read.clientExtensionResults.largeBlob == .init(blob: Base64URL.encode(Array("secret".utf8))))
        expectAuthenticatorError(.notSupported) { try harness.sign(["largeBlob": ["write": "AA"]]) }
        expectAuthenticatorError(.notSupported) { try harness.sign(allow: [id], ["largeBlob": ["read": true, "write": "AA"]]) }
    }

    @Test func unknownExtensionsAreIgnored() throws {
        let harness = Harness()
        let made = try harness.register(["nope": ["x": 1], "credProtectX": true])
        #expect(made.clientExtensionResults == ClientExtensionResults())
        #expect(try AuthenticatorData(parsing: made.result.authenticatorData).extensions == nil)
    }
}
