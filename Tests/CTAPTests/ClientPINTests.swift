import Foundation
import Session
import TestSupport
import Testing
@testable import CTAP

/// authenticatorClientPIN (CTAP 2.1 §6.5) driven with the CBOR a client sends, over both PIN/UV
/// auth protocols: setting and changing the PIN, tokens, retries, the power cycle after three
/// wrong PINs, the lockout, and the PIN as the device's biometric PIN.
@Suite struct ClientPINTests {
    static let versions: [PinUvAuthProtocol.Version] = [.one, .two]

    @Test(arguments: versions)
    func setPINTurnsClientPinOnWithEightRetries(_ version: PinUvAuthProtocol.Version) throws {
        let fixture = try KeyFixture()
        let client = try PINClient(fixture, version)
        #expect(try client.retries().0 == .pinNotSet)
        #expect(try client.setPIN("a1b2c3d4") == .ok)
        let (_, info) = try fixture.send(0x04)
        #expect(info?[.int(0x04)]?[.text("clientPin")] == .bool(true))
        let (status, retries, powerCycle) = try client.retries()
        #expect(status == .ok && retries == 8 && powerCycle == false)
        let biometry = try fixture.session.biometry(device: "key")
        #expect(biometry.enrolled && biometry.failures == 0 && biometry.maxAttempts == 8 && !biometry.lockedOut)
        // A PIN is set: setPIN again is refused, and nothing changes.
        #expect(try client.setPIN("other-pin") == .pinAuthInvalid)
        #expect(try client.token("a1b2c3d4").0 == .ok)
    }

    @Test func theKeyAgreementIsAP256KeyOfAlgorithmMinus25ForEachProtocol() throws {
        let fixture = try KeyFixture()
        var keys = [CBORValue]()
        for version in [1, 2] {
            let (status, answer) = try fixture.send(0x06, .map([(.int(1), .int(version)), (.int(2), .int(2))]))
            #expect(status == .ok)
            let key = try #require(answer?[.int(1)])
            #expect(key[.int(1)] == .int(2) && key[.int(3)] == .int(-25) && key[.int(-1)] == .int(1))
            #expect(key[.int(-2)]?.bytesValue?.count == 32 && key[.int(-3)]?.bytesValue?.count == 32)
            keys.append(key)
        }
        #expect(keys[0] != keys[1])
        // The same key until something regenerates it.
        #expect(try fixture.send(0x06, .map([(.int(1), .int(2)), (.int(2), .int(2))])).1?[.int(1)] == keys[1])
        #expect(try fixture.send(0x06, .map([(.int(2), .int(2))])).0 == .missingParameter)
        #expect(try fixture.send(0x06, .map([(.int(1), .int(3)), (.int(2), .int(2))])).0 == .invalidParameter)
        #expect(try fixture.send(0x06, .map([(.int(1), .text("2")), (.int(2), .int(2))])).0 == .cborUnexpectedType)
    }

    @Test func subcommandsOfBuiltInUserVerificationAndUnknownOnesAreInvalidSubcommands() throws {
        let fixture = try KeyFixture()
        for subcommand in [0x06, 0x07, 0x08, 0x0A, 0xFF] {
            #expect(try fixture.send(0x06, .map([(.int(1), .int(2)), (.int(2), .int(subcommand))])).0 == .invalidSubcommand)
        }
        #expect(try fixture.send(0x06, .map([(.int(1), .int(2))])).0 == .missingParameter)
        #expect(try fixture.send(0x06).0 == .missingParameter)
        #expect(try fixture.send(0x06, .array([])).0 == .cborUnexpectedType)
        #expect(fixture.key.cbor([0x06, 0xA1], progress: CTAPProgress()) == [CTAPStatus.invalidCBOR.rawValue])
    }

    @Test(arguments: versions)
    func aNewPINMustBeFourCodePointsToSixtyThreeBytesPaddedToSixtyFour(_ version: PinUvAuthProtocol.Version) throws {
        let fixture = try KeyFixture()
        let client = try PINClient(fixture, version)
        #expect(try client.setPIN("123") == .pinPolicyViolation)
        // Four bytes, but two code points.
        #expect(try client.setPIN("éé") == .pinPolicyViolation)
        #expect(try client.setPIN(bytes: [0xFF, 0xFE, 0xFD, 0xFC]) == .pinPolicyViolation)
        #expect(try client.setPIN(String(repeating: "7", count: 64)) == .pinPolicyViolation)
        // 65 bytes are padded to 80: not 64.
        #expect(try client.setPIN(String(repeating: "7", count: 65)) == .invalidParameter)
        #expect(try client.retries().0 == .pinNotSet)
        #expect(try client.setPIN(String(repeating: "7", count: 63)) == .ok)
        #expect(try client.token(String(repeating: "7", count: 63)).0 == .ok)
    }

    @Test(arguments: versions)
    func setPINWithAForgedMACOrAKeyOffTheCurveIsRefused(_ version: PinUvAuthProtocol.Version) throws {
        let fixture = try KeyFixture()
        let client = try PINClient(fixture, version)
        let (keyAgreement, secret) = try client.encapsulate()
        let newPinEnc = try client.encrypt(secret, PINClient.padded(Array("a1b2c3d4".utf8)))
        var mac = client.rules.authenticate(key: secret, newPinEnc)
        mac[0] ^= 1
        #expect(try client.send(0x03, [(.int(3), keyAgreement), (.int(4), .bytes(mac)), (.int(5), .bytes(newPinEnc))]).0 == .pinAuthInvalid)
        guard case .map(var members) = keyAgreement else { return }
        members = members.map { $0.0 == .int(-3) ? ($0.0, .bytes(($0.1.bytesValue ?? []).map { $0 ^ 0x5A })) : $0 }
        #expect(try client.send(0x03, [(.int(3), .map(members)), (.int(4), .bytes(client.rules.authenticate(key: secret, newPinEnc))),
                                      (.int(5), .bytes(newPinEnc))]).0 == .invalidParameter)
        #expect(try client.send(0x03, [(.int(3), keyAgreement), (.int(5), .bytes(newPinEnc))]).0 == .missingParameter)
        #expect(try client.send(0x03, [(.int(3), .bytes([1])), (.int(4), .bytes(mac)), (.int(5), .bytes(newPinEnc))]).0 == .cborUnexpectedType)
        // A newPinEnc that is not whole blocks does not decrypt.
        let ragged = newPinEnc + [0]
        #expect(try client.send(0x03, [(.int(3), keyAgreement), (.int(4), .bytes(client.rules.authenticate(key: secret, ragged))),
                                      (.int(5), .bytes(ragged))]).0 == .pinAuthInvalid)
        #expect(try client.retries().0 == .pinNotSet)
    }

    @Test(arguments: versions)
    func threeWrongPINsNeedAPowerCycleAndEachCountsDown(_ version: PinUvAuthProtocol.Version) throws {
        // python-fido2's tests/device/test_clientpin.py::test_pin_validation, step by step.
        let fixture = try KeyFixture()
        let client = try PINClient(fixture, version)
        #expect(try client.setPIN("a1b2c3d4") == .ok)
        #expect(try client.token("123456").0 == .pinInvalid)
        #expect(try client.retries().1 == 7)
        #expect(try client.token("123456").0 == .pinInvalid)
        #expect(try client.token("123456").0 == .pinAuthBlocked)
        #expect(try client.retries().1 == 5 && client.retries().2 == true)
        // Blocked until the power cycle, the right PIN too, and nothing more is counted.
        #expect(try client.token("a1b2c3d4").0 == .pinAuthBlocked)
        #expect(try client.changePIN(from: "a1b2c3d4", to: "d4c3b2a1") == .pinAuthBlocked)
        #expect(try client.retries().1 == 5)
        fixture.key.powerCycled()
        #expect(try client.retries().2 == false)
        #expect(try client.token("123456").0 == .pinInvalid)
        #expect(try client.retries().1 == 4)
        #expect(try client.token("a1b2c3d4").0 == .ok)
        #expect(try client.retries().1 == 8)
        #expect(try fixture.session.biometry(device: "key").failures == 0)
    }

    @Test(arguments: versions)
    func aWrongPINRegeneratesTheKeyAgreement(_ version: PinUvAuthProtocol.Version) throws {
        let fixture = try KeyFixture()
        let client = try PINClient(fixture, version)
        #expect(try client.setPIN("a1b2c3d4") == .ok)
        let (keyAgreement, secret) = try client.encapsulate()
        let pinHashEnc = try client.encrypt(secret, PINClient.pinHash("a1b2c3d4"))
        #expect(try client.token("wrong-pin").0 == .pinInvalid)
        // The right PIN under the secret agreed before the wrong one no longer decrypts to it.
        #expect(try client.send(0x05, [(.int(3), keyAgreement), (.int(6), .bytes(pinHashEnc))]).0 == .pinInvalid)
        #expect(try client.retries().1 == 6)
        #expect(try client.token("a1b2c3d4").0 == .ok)
    }

    @Test func eightWrongPINsBlockThePINForGood() throws {
        let fixture = try KeyFixture()
        let client = try PINClient(fixture, .two)
        #expect(try client.setPIN("a1b2c3d4") == .ok)
        var answers = [CTAPStatus]()
        for _ in 0..<8 {
            if try client.retries().2 == true { fixture.key.powerCycled() }
            answers.append(try client.token("123456").0)
        }
        #expect(answers == [.pinInvalid, .pinInvalid, .pinAuthBlocked, .pinInvalid, .pinInvalid, .pinAuthBlocked, .pinInvalid, .pinBlocked])
        fixture.key.powerCycled()
        #expect(try client.token("a1b2c3d4").0 == .pinBlocked)
        #expect(try client.changePIN(from: "a1b2c3d4", to: "d4c3b2a1") == .pinBlocked)
        #expect(try client.retries().1 == 0)
        #expect(try fixture.session.biometry(device: "key").lockedOut)
        // The vault's passphrase unlocks it, as it does a phone's biometry.
        try fixture.session.change(.unlockBiometry, device: "key")
        #expect(try client.token("a1b2c3d4").0 == .ok)
    }

    @Test func wrongPINsAreCountedInTheVaultAcrossRestarts() throws {
        let directory = try TemporaryDirectory("authctl-ctap")
        let path = directory.path + "/vault"
        do {
            let session = try Session.create(AccountSpec(path: path, passphrase: KeyFixture.passphrase(), kdf: .min,
                                                         devices: [.securityKey(name: "key")], keeping: .durable))
            let fixture = KeyFixtureOnSession(session: session)
            let client = try PINClient(fixture.fixture, .two)
            #expect(try client.setPIN("a1b2c3d4") == .ok)
            #expect(try client.token("123456").0 == .pinInvalid)
            #expect(try client.token("654321").0 == .pinInvalid)
        }
        // Another process opens the vault: the key's PIN and its two failures are there.
        let session = try Session.open(at: path, passphrase: KeyFixture.passphrase())
        let fixture = KeyFixtureOnSession(session: session)
        let client = try PINClient(fixture.fixture, .one)
        #expect(try client.retries().1 == 6)
        #expect(try client.token("a1b2c3d4").0 == .ok)
        #expect(try client.retries().1 == 8)
    }

    @Test(arguments: versions)
    func changePINProvesTheOldPINAndEndsEveryToken(_ version: PinUvAuthProtocol.Version) throws {
        // python-fido2's tests/device/test_clientpin.py::test_change_pin.
        let fixture = try KeyFixture()
        let client = try PINClient(fixture, version)
        #expect(try client.changePIN(from: "a1b2c3d4", to: "d4c3b2a1") == .pinNotSet)
        #expect(try client.setPIN("a1b2c3d4") == .ok)
        let token = try #require(try client.token("a1b2c3d4").1)
        #expect(try client.changePIN(from: "wrong-pin", to: "d4c3b2a1") == .pinInvalid)
        #expect(try client.retries().1 == 7)
        #expect(try client.changePIN(from: "a1b2c3d4", to: "123") == .pinPolicyViolation)
        // The old PIN was right: the count is full again though the new one was refused.
        #expect(try client.retries().1 == 8)
        #expect(try client.changePIN(from: "a1b2c3d4", to: "d4c3b2a1") == .ok)
        #expect(try client.token("a1b2c3d4").0 == .pinInvalid)
        #expect(try client.token("d4c3b2a1").0 == .ok)
        let message = [UInt8](repeating: 7, count: 32)
        #expect(throws: CTAPStatus.pinAuthInvalid) {
            try fixture.key.authorize(client.param(token, message), version: version.rawValue, message: message,
                                                 permission: .makeCredential, rp: .rpId("example.com"))
        }
    }

    @Test(arguments: versions)
    func aTokenFromGetPinTokenServesMakeCredentialAndGetAssertionOfAnyRPAndBindsTheFirst(_ version: PinUvAuthProtocol.Version) throws {
        let fixture = try KeyFixture()
        let client = try PINClient(fixture, version)
        #expect(try client.setPIN("a1b2c3d4") == .ok)
        let token = try #require(try client.token("a1b2c3d4").1)
        #expect(token.count == 32)
        let message = Array(SHA256.hash(Array("clientDataJSON".utf8)))
        let param = client.param(token, message)
        #expect(param.count == (version == .one ? 16 : 32))
        let key = fixture.key
        let verification = try key.authorize(param, version: version.rawValue, message: message,
                                                        permission: .getAssertion, rp: .rpId("example.com"))
        #expect(verification.userVerified && !verification.userPresent && verification.permissionsRPID == "example.com")
        #expect(throws: CTAPStatus.pinAuthInvalid) {
            try key.authorize(param, version: version.rawValue, message: message, permission: .makeCredential,
                                         rp: .rpId("other.example"))
        }
        for permission: PinUvPermission in [.credentialManagement, .largeBlobWrite, .authenticatorConfiguration] {
            #expect(throws: CTAPStatus.pinAuthInvalid) {
                try key.authorize(param, version: version.rawValue, message: message, permission: permission, rp: .any)
            }
        }
        // A MAC of another message, or under the other protocol, is no proof.
        #expect(throws: CTAPStatus.pinAuthInvalid) {
            try key.authorize(param, version: version.rawValue, message: message + [0], permission: .makeCredential,
                                         rp: .rpId("example.com"))
        }
        let other = version == .one ? 2 : 1
        #expect(throws: CTAPStatus.pinAuthInvalid) {
            try key.authorize(param, version: other, message: message, permission: .makeCredential, rp: .rpId("example.com"))
        }
        #expect(throws: CTAPStatus.invalidParameter) {
            try key.authorize(param, version: 3, message: message, permission: .makeCredential, rp: .rpId("example.com"))
        }
        // A getPinToken asking for permissions or an RP is not CTAP 2.0's.
        let (keyAgreement, secret) = try client.encapsulate()
        let pinHashEnc = try client.encrypt(secret, PINClient.pinHash("a1b2c3d4"))
        #expect(try client.send(0x05, [(.int(3), keyAgreement), (.int(6), .bytes(pinHashEnc)), (.int(9), .int(1))]).0 == .invalidParameter)
        #expect(try client.send(0x05, [(.int(3), keyAgreement), (.int(6), .bytes(pinHashEnc)), (.int(10), .text("a.example"))]).0 == .invalidParameter)
    }

    @Test(arguments: versions)
    func aTokenWithPermissionsHoldsThoseAndItsRP(_ version: PinUvAuthProtocol.Version) throws {
        let fixture = try KeyFixture()
        let client = try PINClient(fixture, version)
        #expect(try client.setPIN("a1b2c3d4") == .ok)
        #expect(try client.token("a1b2c3d4", permissions: 0).0 == .invalidParameter)
        #expect(try client.token("a1b2c3d4", permissions: -1).0 == .cborUnexpectedType)
        // be needs bioEnroll, which this key never reports.
        for permission in [0x08, 0x03 | 0x08, 0x04 | 0x10 | 0x20 | 0x08] {
            #expect(try client.token("a1b2c3d4", permissions: permission).0 == .unauthorizedPermission, "permission \(permission)")
        }
        // None of those refusals looked at the PIN.
        #expect(try client.retries().1 == 8)
        // cm, lbw and acfg: credMgmt, largeBlobs and authnrCfg are true.
        for permission in [0x04, 0x10, 0x20] {
            #expect(try client.token("a1b2c3d4", permissions: permission).0 == .ok, "permission \(permission)")
        }
        // Undefined bits are ignored.
        let token = try #require(try client.token("a1b2c3d4", permissions: 0x01 | 0x80, rpId: "example.com").1)
        let message = [UInt8](repeating: 1, count: 32)
        let param = client.param(token, message)
        #expect(throws: CTAPStatus.pinAuthInvalid) {
            try fixture.key.authorize(param, version: version.rawValue, message: message, permission: .getAssertion,
                                                 rp: .rpId("example.com"))
        }
        #expect(throws: CTAPStatus.pinAuthInvalid) {
            try fixture.key.authorize(param, version: version.rawValue, message: message, permission: .makeCredential,
                                                 rp: .rpId("evil.example"))
        }
        #expect(throws: CTAPStatus.pinAuthInvalid) {
            try fixture.key.authorize(param, version: version.rawValue, message: message, permission: .makeCredential,
                                                 rp: .rpIdHash(Array(SHA256.hash(Array("evil.example".utf8)))))
        }
        let verification = try fixture.key.authorize(param, version: version.rawValue, message: message,
                                                                permission: .makeCredential,
                                                                rp: .rpIdHash(Array(SHA256.hash(Array("example.com".utf8)))))
        #expect(verification.permissionsRPID == "example.com")
    }

    @Test func aNewTokenEndsTheOldAndAPowerCycleEndsBoth() throws {
        let fixture = try KeyFixture()
        let two = try PINClient(fixture, .two), one = try PINClient(fixture, .one)
        #expect(try two.setPIN("a1b2c3d4") == .ok)
        let message = [UInt8](repeating: 2, count: 32)
        let first = try #require(try two.token("a1b2c3d4").1)
        let second = try #require(try one.token("a1b2c3d4").1)
        #expect(throws: CTAPStatus.pinAuthInvalid) {
            try fixture.key.authorize(two.param(first, message), version: 2, message: message, permission: .makeCredential,
                                                 rp: .rpId("example.com"))
        }
        _ = try fixture.key.authorize(one.param(second, message), version: 1, message: message, permission: .makeCredential,
                                                 rp: .rpId("example.com"))
        fixture.key.powerCycled()
        #expect(throws: CTAPStatus.pinAuthInvalid) {
            try fixture.key.authorize(one.param(second, message), version: 1, message: message, permission: .makeCredential,
                                                 rp: .rpId("example.com"))
        }
    }

    @Test func aTokenUnusedForThirtySecondsOrUsedForTenMinutesExpires() throws {
        let fixture = try KeyFixture()
        let clock = TestClock()
        fixture.key.now = { clock.now }
        let client = try PINClient(fixture, .two)
        #expect(try client.setPIN("a1b2c3d4") == .ok)
        let message = [UInt8](repeating: 3, count: 32)
        func use(_ token: [UInt8]) throws -> PinUvAuthorization {
            try fixture.key.authorize(client.param(token, message), version: 2, message: message,
                                                 permission: .getAssertion, rp: .rpId("example.com"))
        }
        let idle = try #require(try client.token("a1b2c3d4").1)
        clock.advance(31)
        #expect(throws: CTAPStatus.pinAuthInvalid) { try use(idle) }
        let used = try #require(try client.token("a1b2c3d4").1)
        clock.advance(29)
        _ = try use(used)
        clock.advance(500)
        _ = try use(used)
        clock.advance(80)
        #expect(throws: CTAPStatus.pinAuthInvalid) { try use(used) }
    }

    @Test func makeCredentialAndGetAssertionNeedTheUserVerifiedFlagThatPresenceClears() throws {
        let fixture = try KeyFixture()
        let client = try PINClient(fixture, .two)
        #expect(try client.setPIN("a1b2c3d4") == .ok)
        let token = try #require(try client.token("a1b2c3d4", permissions: 0x01 | 0x02).1)
        let message = [UInt8](repeating: 4, count: 32)
        _ = try fixture.key.authorize(client.param(token, message), version: 2, message: message,
                                                 permission: .makeCredential, rp: .rpId("example.com"))
        fixture.key.consumePinUvAuthTokenAfterPresence()
        #expect(throws: CTAPStatus.pinAuthInvalid) {
            try fixture.key.authorize(client.param(token, message), version: 2, message: message,
                                                 permission: .getAssertion, rp: .rpId("example.com"))
        }
    }

    @Test func theKeysPINIsTheDevicesBiometricPINInHex() throws {
        let fixture = try KeyFixture()
        let client = try PINClient(fixture, .two)
        #expect(try client.setPIN("1234") == .ok)
        // `printf %s 1234 | sha256sum | cut -c1-32`: what the device's biometric PIN is now. A new
        // biometric PIN set with it is the key's new PIN, as the hex of its hash would be.
        let hex = "03ac674216f3e15c761ee1a5e255f067"
        #expect(throws: SessionError.self) {
            try fixture.session.enrollPIN(secret(hex), device: "key", person: PersonRequest(pin: "1234"))
        }
        #expect(try client.retries().1 == 7)
        let next = String(SHA256.hash(Array("5678".utf8)).prefix(16).map { String(format: "%02x", $0) }.joined())
        try fixture.session.enrollPIN(secret(next), device: "key", person: PersonRequest(pin: hex))
        #expect(try client.token("1234").0 == .pinInvalid)
        #expect(try client.token("5678").0 == .ok)
    }
}

func secret(_ text: String) -> SecureBytes {
    var bytes = Array(text.utf8)
    return SecureBytes(consuming: &bytes)
}

extension ClientPINTests {
    @Test func aPINSetInAnAccountWithAnEnrolledPhoneIsApprovedByThePhone() throws {
        // The phone's PIN is known where the key runs: it approves, and the key's PIN wraps the
        // account's biometry key.
        let fixture = try KeyFixture(phone: true)
        let client = try PINClient(fixture, .two)
        #expect(try client.setPIN("a1b2c3d4") == .ok)
        #expect(try client.token("a1b2c3d4").0 == .ok)
        // Not known: nobody approves, and the key stays without a PIN.
        let directory = try TemporaryDirectory("authctl-ctap")
        var pin = Array("1111".utf8)
        let session = try Session.create(AccountSpec(path: directory.path + "/vault", passphrase: KeyFixture.passphrase(), kdf: .min,
                                                     devices: [AccountSpec.DeviceSpec(name: "phone", pin: SecureBytes(consuming: &pin)),
                                                               .securityKey(name: "key")],
                                                     keeping: .throwAway(storeInMemory: true)))
        let lone = try PINClient(KeyFixtureOnSession(session: session).fixture, .two)
        #expect(try lone.setPIN("a1b2c3d4") == .operationDenied)
        #expect(try lone.retries().0 == .pinNotSet)
        #expect(try session.biometry(device: "phone").failures == 0)
    }
}

extension ClientPINTests {
    @Test func aPINSetAfterTheDeviceLostItsOwnEndsTheOldPINsToken() throws {
        let fixture = try KeyFixture()
        let client = try PINClient(fixture, .two)
        #expect(try client.setPIN("a1b2c3d4") == .ok)
        let token = try #require(try client.token("a1b2c3d4").1)
        // The device is reset from the command line while the key has power and its token.
        try fixture.session.change(.reset, device: "key")
        #expect(try client.retries().0 == .pinNotSet)
        #expect(try client.setPIN("d4c3b2a1") == .ok)
        let message = [UInt8](repeating: 5, count: 32)
        #expect(throws: CTAPStatus.pinAuthInvalid) {
            try fixture.key.authorize(client.param(token, message), version: 2, message: message, permission: .makeCredential,
                                      rpId: "example.com")
        }
    }
}

/// A security key on an account a test made itself.
struct KeyFixtureOnSession {
    let fixture: KeyFixture

    init(session: Session) {
        fixture = KeyFixture(session: session, key: SecurityKey(session: session, device: "key"))
    }
}

/// A clock a test moves by hand.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current = Date(timeIntervalSince1970: 1_800_000_000)
    var now: Date { lock.withLock { current } }
    func advance(_ seconds: TimeInterval) { lock.withLock { current += seconds } }
}
