import Session
import Testing
@testable import Audit

/// What the audit changes itself: a registration's attestation object taken apart and put back
/// with one thing changed, the audit's own key's assertions, and the form two begins are compared by.
struct RegistrationForgeryTests {
    static let options = JSONValue.object([
        "rp": .object(["id": .string("yourbank.example"), "name": .string("Bank")]),
        "user": .object(["id": .string("Y3VzdG9tZXItMDA0Mg"), "name": .string("budi"), "displayName": .string("Budi")]),
        "challenge": .string("AAAAAAAAAAAAAAAAAAAAAA"),
        "pubKeyCredParams": .array([.object(["type": .string("public-key"), "alg": .integer(-7)])]),
        "authenticatorSelection": .object(["residentKey": .string("required"), "userVerification": .string("required")]),
    ])

    /// An honest registration response of the audit's authenticator, and its attestation object.
    static func honest() throws -> (JSONValue, [UInt8]) {
        let runner = try AuditRunner(base: "http://127.0.0.1:9", profile: .rpServer)
        let made = try runner.respond(toRegistration: AuditRunner.BeginOptions(json: options), fault: nil)
        guard case .string(let text)? = made.json.member("response.attestationObject"), let bytes = Base64URL.decode(text) else {
            throw AuditRunner.Stop("no attestation object")
        }
        return (made.json, bytes)
    }

    static func attestationObject(_ json: JSONValue) throws -> [UInt8] {
        guard case .string(let text)? = json.member("response.attestationObject"), let bytes = Base64URL.decode(text) else {
            throw AuditRunner.Stop("no attestation object")
        }
        return bytes
    }

    @Test func takenApartAndPutBackUnchangedItIsTheSameBytes() throws {
        let (json, bytes) = try Self.honest()
        let forgery = try RegistrationForgery(json)
        #expect(try Self.attestationObject(forgery.json) == bytes)
        #expect(forgery.json == json)
    }

    @Test func eachEditChangesItsOneThing() throws {
        let (json, bytes) = try Self.honest()
        let original = try RegistrationForgery(json).authenticatorData
        func edited(_ edit: AuditCase.RegistrationEdit) throws -> (RegistrationForgery, [UInt8]) {
            var forgery = try RegistrationForgery(json)
            AuditRunner.apply(edit, to: &forgery)
            return (forgery, try Self.attestationObject(forgery.json))
        }
        let (bs, _) = try edited(.backupStateWithoutEligibility)
        #expect(bs.authenticatorData.flags.contains(.backupState) && !bs.authenticatorData.flags.contains(.backupEligible))
        #expect(bs.authenticatorData.attestedCredentialData == original.attestedCredentialData)

        let (_, trailing) = try edited(.trailingBytes)
        #expect(trailing == bytes + [0x00])
        #expect(throws: CBORValue.DecodingError.self) { try CBORValue.decode(trailing) }

        let (miscased, _) = try edited(.formatMiscased)
        #expect(miscased.format == "None")
        let (statement, _) = try edited(.noneWithStatement)
        #expect(statement.format == "none" && statement.statement[.text("sig")]?.bytesValue?.count == 70)

        // AT cleared, the attested credential data still there: what a strict parser refuses.
        let (cleared, clearedBytes) = try edited(.attestedDataFlagCleared)
        #expect(!cleared.authenticatorData.flags.contains(.attestedCredentialData))
        let data = try #require(CBORValue.decode(clearedBytes)[.text("authData")]?.bytesValue)
        #expect(throws: AuthenticatorData.ParseError.self) { try AuthenticatorData(parsing: data) }

        let (extended, extendedBytes) = try edited(.unsolicitedExtension)
        let parsed = try AuthenticatorData(parsing: #require(CBORValue.decode(extendedBytes)[.text("authData")]?.bytesValue))
        #expect(parsed.flags.contains(.extensionData) && parsed.extensions?[.text("credProtect")] == .int(2))
        #expect(extended.authenticatorData.attestedCredentialData == original.attestedCredentialData)
    }

    @Test func aCredentialReplacedIsTheKeysEverywhereTheResponseNamesIt() throws {
        let (json, _) = try Self.honest()
        var forgery = try RegistrationForgery(json)
        let key = try PrivateKey.generate(.edDSA)
        let id = AuditRunner.randomBytes(64)
        forgery.replaceCredential(id: id, key: key)
        let out = forgery.json
        #expect(out.member("id") == .string(Base64URL.encode(id)) && out.member("rawId") == .string(Base64URL.encode(id)))
        #expect(out.member("response.publicKeyAlgorithm") == .integer(-8))
        let data = try AuthenticatorData(parsing: #require(CBORValue.decode(Self.attestationObject(out))[.text("authData")]?.bytesValue))
        #expect(data.attestedCredentialData?.credentialId == id && data.attestedCredentialData?.publicKey == key.publicKey)
    }

    @Test func theOwnKeysAssertionVerifiesAndItsChangesDoNot() throws {
        let key = try PrivateKey.generate(.es256)
        let own = OwnPasskey(key: key, credentialId: [1, 2, 3], rpIdHash: SHA256.hash(Array("yourbank.example".utf8)),
                             flags: [.backupEligible, .backupState], userHandle: "aGFuZGxl")
        func verifies(_ assertion: OwnPasskey.Assertion) throws -> Bool {
            let json = try own.respond(challenge: [7, 7, 7], origin: "https://yourbank.example", assertion)
            guard case .string(let c)? = json.member("response.clientDataJSON"), case .string(let a)? = json.member("response.authenticatorData"),
                  case .string(let s)? = json.member("response.signature"), let clientData = Base64URL.decode(c),
                  let data = Base64URL.decode(a), let signature = Base64URL.decode(s) else { return false }
            return SignatureVerifier.verify(signature: signature, message: data + SHA256.hash(clientData), spki: key.publicKey.subjectPublicKeyInfo)
        }
        #expect(try verifies(own.honest))
        var flags = own.honest
        flags.flags.remove([.backupEligible, .backupState])
        #expect(try verifies(flags))  // re-signed: only the flags differ
        var zero = own.honest
        zero.signature = { _ in AuditRunner.zeroECDSASignature }
        #expect(try !verifies(zero))
        let other = try PrivateKey.generate(.es256)
        var byOther = own.honest
        byOther.signature = { try other.sign($0) }
        #expect(try !verifies(byOther))
    }

    @Test func twoAnswersAreAlikeWhenOnlyTheirValuesDiffer() {
        let a = JSONValue.object(["publicKey": .object(["challenge": .string("abc"), "allowCredentials": .array([.object(["id": .string("x")])])])])
        let b = JSONValue.object(["publicKey": .object(["challenge": .string("xyz"), "allowCredentials": .array([.object(["id": .string("y")])])])])
        let empty = JSONValue.object(["publicKey": .object(["challenge": .string("xyz"), "allowCredentials": .array([])])])
        #expect(AuditRunner.shape(status: 200, a) == AuditRunner.shape(status: 200, b))
        #expect(AuditRunner.shape(status: 200, a) != AuditRunner.shape(status: 200, empty))
        #expect(AuditRunner.shape(status: 200, a) != AuditRunner.shape(status: 400, a))
    }
}
