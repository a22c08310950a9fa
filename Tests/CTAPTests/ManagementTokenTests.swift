import Foundation
import Session
import Testing
@testable import CTAP

/// The management commands with a PIN token, as a client drives them after getPinUvAuthToken:
/// credential management end to end, a token's permission and RP binding, a large-blob write and
/// the configuration with a PIN set, and forcePINChange with the PIN commands.
@Suite struct ManagementTokenTests {
    static let pin = "a1b2c3d4"
    static let cm = 0x04, lbw = 0x10, acfg = 0x20

    /// A credential management request with a pinUvAuthParam over subCommand ‖ subCommandParams.
    static func management(_ client: PINClient, _ token: [UInt8], _ subcommand: Int, _ parameters: [(CBORValue, CBORValue)]? = nil,
                           command: UInt8 = 0x0A) throws -> (CTAPStatus, CBORValue?) {
        let message = [UInt8(subcommand)] + (parameters.map { CBORValue.map($0).encoded() } ?? [])
        var members: [(CBORValue, CBORValue)] = [(.int(1), .int(subcommand))]
        if let parameters { members.append((.int(2), .map(parameters))) }
        members += [(.int(3), .int(client.version.rawValue)), (.int(4), .bytes(client.param(token, message)))]
        return try client.fixture.send(command, .map(members))
    }

    static func next(_ fixture: KeyFixture, _ subcommand: Int, command: UInt8 = 0x0A) throws -> (CTAPStatus, CBORValue?) {
        try fixture.send(command, .map([(.int(1), .int(subcommand))]))
    }

    static func rpIdHash(_ rpId: String) -> CBORValue { .bytes(SHA256.hash(Array(rpId.utf8))) }

    static func descriptor(_ id: [UInt8]) -> CBORValue { .map([(.text("id"), .bytes(id)), (.text("type"), .text("public-key"))]) }

    /// A key with credentials — two of example.com (the second with a largeBlobKey), one of
    /// other.example, one of example.com made with rk false — then the PIN set.
    static func keyWithCredentials(_ version: PinUvAuthProtocol.Version, phone: Bool = false) throws
        -> (KeyFixture, PINClient, ids: [[UInt8]], keys: [COSEKey], largeBlobKey: [UInt8]) {
        let fixture = try KeyFixture(phone: phone)
        var ids = [[UInt8]](), keys = [COSEKey](), largeBlobKey = [UInt8]()
        for (rp, user, blob) in [("example.com", [UInt8]([1]), false), ("example.com", [2], true), ("other.example", [3], false)] {
            let request = blob ? CredentialManagementTests.makeCredential(largeBlobKey: .bool(true), user: user)
                : CeremonyTests.makeCredential(rp: rp, user: user)
            let made = try #require(fixture.send(0x01, request).1)
            let (id, key) = try CeremonyTests.attested(try #require(made[.int(2)]?.bytesValue))
            ids.append(id)
            keys.append(key)
            if blob { largeBlobKey = try #require(made[.int(5)]?.bytesValue) }
        }
        #expect(try fixture.send(0x01, CeremonyTests.makeCredential(user: [4], rk: false)).0 == .ok)
        let client = try PINClient(fixture, version)
        #expect(try client.setPIN(pin) == .ok)
        return (fixture, client, ids, keys, largeBlobKey)
    }

    @Test(arguments: ClientPINTests.versions)
    func credentialManagementListsRenamesAndDeletesTheKeysDiscoverableCredentials(_ version: PinUvAuthProtocol.Version) throws {
        let (fixture, client, ids, keys, largeBlobKey) = try Self.keyWithCredentials(version)
        let token = try #require(client.token(Self.pin, permissions: Self.cm).1)

        let (metaStatus, meta) = try Self.management(client, token, 0x01)
        #expect(metaStatus == .ok)
        #expect(meta?[.int(1)] == .int(3) && meta?[.int(2)] == .int(97))

        // The RPs, in RP ID order, one at a time.
        let (rpStatus, firstRP) = try Self.management(client, token, 0x02)
        #expect(rpStatus == .ok)
        #expect(firstRP?[.int(3)] == .map([(.text("id"), .text("example.com"))]))
        #expect(firstRP?[.int(4)] == Self.rpIdHash("example.com"))
        #expect(firstRP?[.int(5)] == .int(2))
        let secondRP = try Self.next(fixture, 0x03)
        #expect(secondRP.0 == .ok && secondRP.1?[.int(3)]?[.text("id")] == .text("other.example") && secondRP.1?[.int(5)] == nil)
        #expect(try Self.next(fixture, 0x03).0 == .notAllowed)

        // example.com's credentials: the one made with rk false is not among them.
        let (credStatus, first) = try Self.management(client, token, 0x04, [(.int(1), Self.rpIdHash("example.com"))])
        #expect(credStatus == .ok)
        #expect(first?[.int(9)] == .int(2))
        #expect(first?[.int(6)] == .map([(.text("id"), .bytes([1])), (.text("name"), .text("ann")), (.text("displayName"), .text("Ann"))]))
        #expect(first?[.int(7)] == Self.descriptor(ids[0]))
        #expect(first?[.int(8)].flatMap(COSEKey.init(cbor:)) == keys[0])
        #expect(first?[.int(0x0A)] == .int(1))
        #expect(first?[.int(0x0B)] == nil)
        let second = try Self.next(fixture, 0x05)
        #expect(second.0 == .ok && second.1?[.int(7)] == Self.descriptor(ids[1]) && second.1?[.int(9)] == nil)
        #expect(second.1?[.int(0x0B)] == .bytes(largeBlobKey))
        #expect(try Self.next(fixture, 0x05).0 == .notAllowed)
        #expect(try Self.management(client, token, 0x04, [(.int(1), Self.rpIdHash("nobody.example"))]).0 == .noCredentials)
        #expect(try Self.management(client, token, 0x04, []).0 == .missingParameter)

        // Renamed; a name left out is removed; another user id is refused.
        let user: CBORValue = .map([(.text("id"), .bytes([1])), (.text("name"), .text("anne")), (.text("displayName"), .text("Anne B."))])
        #expect(try Self.management(client, token, 0x07, [(.int(2), Self.descriptor(ids[0])), (.int(3), user)]).0 == .ok)
        #expect(try Self.management(client, token, 0x04, [(.int(1), Self.rpIdHash("example.com"))]).1?[.int(6)] == user)
        #expect(try Self.management(client, token, 0x07, [(.int(2), Self.descriptor(ids[0])), (.int(3), .map([(.text("id"), .bytes([1]))]))]).0 == .ok)
        #expect(try Self.management(client, token, 0x04, [(.int(1), Self.rpIdHash("example.com"))]).1?[.int(6)] == .map([(.text("id"), .bytes([1]))]))
        #expect(try Self.management(client, token, 0x07, [(.int(2), Self.descriptor(ids[0])), (.int(3), .map([(.text("id"), .bytes([9]))]))]).0
                == .invalidParameter)

        // Deleted, once.
        #expect(try Self.management(client, token, 0x06, [(.int(2), Self.descriptor(ids[2]))]).0 == .ok)
        #expect(try Self.management(client, token, 0x06, [(.int(2), Self.descriptor(ids[2]))]).0 == .noCredentials)
        #expect(try Self.management(client, token, 0x01).1?[.int(1)] == .int(2))
        #expect(try fixture.session.keyCredentials(device: "key").map(\.id) == [ids[0], ids[1]])
    }

    @Test func theCredentialManagementPreviewCommandAnswersTheSame() throws {
        let (fixture, client, ids, _, _) = try Self.keyWithCredentials(.two)
        let token = try #require(client.token(Self.pin, permissions: Self.cm).1)
        let (status, first) = try Self.management(client, token, 0x04, [(.int(1), Self.rpIdHash("example.com"))], command: 0x41)
        #expect(status == .ok && first?[.int(7)] == Self.descriptor(ids[0]))
        #expect(try Self.next(fixture, 0x05, command: 0x41).1?[.int(7)] == Self.descriptor(ids[1]))
    }

    @Test func anyOtherCommandOrSubcommandEndsAnEnumeration() throws {
        let (fixture, client, _, _, _) = try Self.keyWithCredentials(.two)
        let token = try #require(client.token(Self.pin, permissions: Self.cm).1)
        #expect(try Self.management(client, token, 0x02).0 == .ok)
        #expect(try fixture.send(0x04).0 == .ok)
        #expect(try Self.next(fixture, 0x03).0 == .notAllowed)
        #expect(try Self.management(client, token, 0x04, [(.int(1), Self.rpIdHash("example.com"))]).0 == .ok)
        #expect(try Self.management(client, token, 0x01).0 == .ok)
        #expect(try Self.next(fixture, 0x05).0 == .notAllowed)
        // The other kind's next is no next of this one.
        #expect(try Self.management(client, token, 0x02).0 == .ok)
        #expect(try Self.next(fixture, 0x05).0 == .notAllowed)
    }

    @Test func aTokenWithoutTheCmPermissionOrOverOtherParametersIsRefused() throws {
        let (_, client, ids, _, _) = try Self.keyWithCredentials(.two)
        let lbwToken = try #require(client.token(Self.pin, permissions: Self.lbw).1)
        #expect(try Self.management(client, lbwToken, 0x01).0 == .pinAuthInvalid)
        let token = try #require(client.token(Self.pin, permissions: Self.cm).1)
        // A MAC over other parameters than those sent.
        let message = [UInt8(6)] + CBORValue.map([(.int(2), Self.descriptor(ids[1]))]).encoded()
        let forged: CBORValue = .map([(.int(1), .int(6)), (.int(2), .map([(.int(2), Self.descriptor(ids[0]))])), (.int(3), .int(2)),
                                      (.int(4), .bytes(client.param(token, message)))])
        #expect(try client.fixture.send(0x0A, forged).0 == .pinAuthInvalid)
        #expect(try client.fixture.session.keyCredentials(device: "key").count == 3)
    }

    @Test func aTokenBoundToAnRPServesOnlyThatRPsCredentials() throws {
        let (_, client, ids, _, _) = try Self.keyWithCredentials(.two)
        let token = try #require(client.token(Self.pin, permissions: Self.cm, rpId: "example.com").1)
        #expect(try Self.management(client, token, 0x01).0 == .pinAuthInvalid)
        #expect(try Self.management(client, token, 0x02).0 == .pinAuthInvalid)
        #expect(try Self.management(client, token, 0x04, [(.int(1), Self.rpIdHash("other.example"))]).0 == .pinAuthInvalid)
        #expect(try Self.management(client, token, 0x06, [(.int(2), Self.descriptor(ids[2]))]).0 == .pinAuthInvalid)
        #expect(try Self.management(client, token, 0x04, [(.int(1), Self.rpIdHash("example.com"))]).1?[.int(9)] == .int(2))
        #expect(try Self.management(client, token, 0x06, [(.int(2), Self.descriptor(ids[0]))]).0 == .ok)
        #expect(try client.fixture.session.keyCredentials(device: "key").map(\.id) == [ids[1], ids[2]])
    }

    @Test func aDeviceBoundKeyNeitherListsNorDeletesThePasskeysAPhoneSyncsToIt() throws {
        let (fixture, client, _, _, _) = try Self.keyWithCredentials(.two, phone: true)
        _ = try fixture.session.register(RegisterRequest(device: "phone", caller: CallerContext(origin: "https://example.com"),
                                                         options: .built(CreationOptionsBuilder(rpId: "example.com"))))
        let phoneId = try #require(fixture.session.passkeys(device: "phone").first?.id)
        let token = try #require(client.token(Self.pin, permissions: Self.cm).1)
        #expect(try Self.management(client, token, 0x01).1?[.int(1)] == .int(3))
        #expect(try Self.management(client, token, 0x04, [(.int(1), Self.rpIdHash("example.com"))]).1?[.int(9)] == .int(2))
        #expect(try Self.management(client, token, 0x06, [(.int(2), Self.descriptor(phoneId))]).0 == .noCredentials)
        #expect(try fixture.session.passkeys(device: "phone").count == 1)
    }

    // MARK: - Large blobs and configuration with a PIN

    static func blobParam(_ client: PINClient, _ token: [UInt8], offset: Int, _ fragment: [UInt8]) -> [UInt8] {
        let message = [UInt8](repeating: 0xFF, count: 32) + [0x0C, 0x00] + (0..<4).map { UInt8(truncatingIfNeeded: offset >> (8 * $0)) }
            + SHA256.hash(fragment)
        return client.param(token, message)
    }

    @Test(arguments: ClientPINTests.versions)
    func aLargeBlobWriteWithAPINNeedsATokenOfTheLbwPermissionForEachFragment(_ version: PinUvAuthProtocol.Version) throws {
        let fixture = try KeyFixture()
        let client = try PINClient(fixture, version)
        #expect(try client.setPIN(Self.pin) == .ok)
        let array = LargeBlobTests.array(entryOf: 1500)
        let token = try #require(client.token(Self.pin, permissions: Self.lbw).1)
        func set(_ range: Range<Int>, _ token: [UInt8], paramOffset: Int? = nil) throws -> CTAPStatus {
            let fragment = Array(array[range])
            var members: [(CBORValue, CBORValue)] = [(.int(2), .bytes(fragment)), (.int(3), .int(range.lowerBound))]
            if range.lowerBound == 0 { members.append((.int(4), .int(array.count))) }
            members += [(.int(5), .bytes(Self.blobParam(client, token, offset: paramOffset ?? range.lowerBound, fragment))),
                        (.int(6), .int(version.rawValue))]
            return try fixture.send(0x0C, .map(members)).0
        }
        #expect(try set(0..<1000, token) == .ok)
        // A MAC made for another offset; a token of another permission.
        #expect(try set(1000..<array.count, token, paramOffset: 0) == .pinAuthInvalid)
        let cmToken = try #require(client.token(Self.pin, permissions: Self.cm).1)
        #expect(try set(0..<1000, cmToken) == .pinAuthInvalid)
        let again = try #require(client.token(Self.pin, permissions: Self.lbw).1)
        #expect(try set(0..<1000, again) == .ok)
        #expect(try set(1000..<array.count, again) == .ok)
        #expect(try LargeBlobTests.read(fixture) == array)
    }

    static func config(_ client: PINClient, _ token: [UInt8], _ subcommand: Int, _ parameters: [(CBORValue, CBORValue)]? = nil)
        throws -> CTAPStatus {
        let message = [UInt8](repeating: 0xFF, count: 32) + [0x0D, UInt8(subcommand)] + (parameters.map { CBORValue.map($0).encoded() } ?? [])
        var members: [(CBORValue, CBORValue)] = [(.int(1), .int(subcommand))]
        if let parameters { members.append((.int(2), .map(parameters))) }
        members += [(.int(3), .int(client.version.rawValue)), (.int(4), .bytes(client.param(token, message)))]
        return try client.fixture.send(0x0D, .map(members)).0
    }

    @Test(arguments: ClientPINTests.versions)
    func alwaysUvWithAPINMakesTheCeremoniesAskForATokenOfTheirOwn(_ version: PinUvAuthProtocol.Version) throws {
        let fixture = try KeyFixture()
        let client = try PINClient(fixture, version)
        #expect(try client.setPIN(Self.pin) == .ok)
        let mcToken = try #require(client.token(Self.pin, permissions: 0x01, rpId: "example.com").1)
        #expect(try Self.config(client, mcToken, 0x02) == .pinAuthInvalid)  // no acfg
        let token = try #require(client.token(Self.pin, permissions: Self.acfg).1)
        #expect(try Self.config(client, token, 0x02) == .ok)
        #expect(try ConfigTests.info(fixture)[.int(0x04)]?[.text("alwaysUv")] == .bool(true))
        #expect(try fixture.send(0x01, CeremonyTests.makeCredential(rk: false)).0 == .puatRequired)
        let mc = try #require(client.token(Self.pin, permissions: 0x01, rpId: "example.com").1)
        #expect(try fixture.send(0x01, PINTokenCeremonyTests.withToken(CeremonyTests.makeCredential(rk: false), client, mc, paramKey: 8)).0 == .ok)
        let token2 = try #require(client.token(Self.pin, permissions: Self.acfg).1)
        #expect(try Self.config(client, token2, 0x02) == .ok)
        #expect(try fixture.send(0x01, CeremonyTests.makeCredential(rk: false)).0 == .ok)
    }

    @Test(arguments: ClientPINTests.versions)
    func aForcedPINChangeRefusesTokensUntilThePINChanges(_ version: PinUvAuthProtocol.Version) throws {
        let fixture = try KeyFixture()
        let client = try PINClient(fixture, version)
        #expect(try client.setPIN(Self.pin) == .ok)
        let token = try #require(client.token(Self.pin, permissions: Self.acfg).1)
        #expect(try Self.config(client, token, 0x03, [(.int(3), .bool(true))]) == .ok)
        #expect(try ConfigTests.info(fixture)[.int(0x0C)] == .bool(true))
        // The PIN is right, and still no token: getPinToken says PIN_INVALID, as a YubiKey does
        // (python-fido2's test_force_pin_change), the permissions' way PIN_POLICY_VIOLATION.
        #expect(try client.token(Self.pin).0 == .pinInvalid)
        #expect(try client.token(Self.pin, permissions: Self.cm).0 == .pinPolicyViolation)
        #expect(try client.retries().1 == 8)
        #expect(try client.changePIN(from: Self.pin, to: "d4c3b2a1") == .ok)
        #expect(try ConfigTests.info(fixture)[.int(0x0C)] == .bool(false))
        #expect(try client.token("d4c3b2a1").0 == .ok)
    }

    @Test(arguments: ClientPINTests.versions)
    func aRaisedMinimumPINLengthHoldsForNewPINsAndForcesAChangeOfAShorterOne(_ version: PinUvAuthProtocol.Version) throws {
        let fixture = try KeyFixture()
        let client = try PINClient(fixture, version)
        #expect(try client.setPIN("12345") == .ok)
        var token = try #require(client.token("12345", permissions: Self.acfg).1)
        // Five code points: a minimum of five forces nothing, of six forces a change.
        #expect(try Self.config(client, token, 0x03, [(.int(1), .int(5))]) == .ok)
        #expect(try ConfigTests.info(fixture)[.int(0x0C)] == .bool(false))
        #expect(try client.changePIN(from: "12345", to: "1234") == .pinPolicyViolation)
        #expect(try client.changePIN(from: "12345", to: "ééééé") == .ok)
        token = try #require(client.token("ééééé", permissions: Self.acfg).1)
        #expect(try Self.config(client, token, 0x03, [(.int(1), .int(6))]) == .ok)
        #expect(try ConfigTests.info(fixture)[.int(0x0C)] == .bool(true))
        #expect(try ConfigTests.info(fixture)[.int(0x0D)] == .int(6))
        #expect(try client.changePIN(from: "ééééé", to: "123456") == .ok)
        #expect(try ConfigTests.info(fixture)[.int(0x0C)] == .bool(false))
    }
}
