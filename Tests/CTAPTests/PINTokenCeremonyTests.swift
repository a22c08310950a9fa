import Foundation
import Session
import Testing
@testable import CTAP

/// makeCredential and getAssertion with a pinUvAuthParam made with a token from
/// authenticatorClientPIN: the UV bit, the token spent by the touch, the RP it is bound to, a
/// credential only a verified sign-in sees, and what a reset leaves of the PIN.
@Suite struct PINTokenCeremonyTests {
    /// `request` with pinUvAuthParam (`paramKey`) and pinUvAuthProtocol (`paramKey + 1`) made with `token`.
    static func withToken(_ request: CBORValue, _ client: PINClient, _ token: [UInt8], paramKey: Int) -> CBORValue {
        guard case .map(var members) = request else { return request }
        members.append((.int(paramKey), .bytes(client.param(token, CeremonyTests.hash))))
        members.append((.int(paramKey + 1), .int(client.version.rawValue)))
        return .map(members)
    }

    @Test(arguments: [PinUvAuthProtocol.Version.one, .two])
    func aRegistrationWithATokenIsVerifiedAndSpendsTheTokensMakeCredential(_ version: PinUvAuthProtocol.Version) throws {
        let fixture = try KeyFixture()
        let client = try PINClient(fixture, version)
        #expect(try client.setPIN("a1b2c3d4") == .ok)
        // A PIN is set: a discoverable credential without a token is refused.
        #expect(try fixture.send(0x01, CeremonyTests.makeCredential()).0 == .puatRequired)
        let token = try #require(try client.token("a1b2c3d4").1)
        let request = Self.withToken(CeremonyTests.makeCredential(), client, token, paramKey: 8)
        let (status, made) = try fixture.send(0x01, request)
        #expect(status == .ok)
        let data = try #require(made?[.int(2)]?.bytesValue)
        #expect(data[32] & 0x05 == 0x05)  // UP and UV
        // The touch spent the token's makeCredential and getAssertion permissions.
        #expect(try fixture.send(0x01, request).0 == .pinAuthInvalid)
        #expect(try fixture.send(0x02, Self.withToken(CeremonyTests.getAssertion(), client, token, paramKey: 6)).0 == .pinAuthInvalid)
        // A fresh one signs in, verified.
        let next = try #require(try client.token("a1b2c3d4", permissions: 0x02, rpId: "example.com").1)
        let (signed, assertion) = try fixture.send(0x02, Self.withToken(CeremonyTests.getAssertion(), client, next, paramKey: 6))
        #expect(signed == .ok)
        #expect(try #require(assertion?[.int(2)]?.bytesValue)[32] & 0x05 == 0x05)
    }

    @Test func aTokenForOneRPDoesNotServeAnother() throws {
        let fixture = try KeyFixture()
        let client = try PINClient(fixture, .two)
        #expect(try client.setPIN("a1b2c3d4") == .ok)
        let token = try #require(try client.token("a1b2c3d4", permissions: 0x01, rpId: "example.com").1)
        let other = Self.withToken(CeremonyTests.makeCredential(rp: "other.example"), client, token, paramKey: 8)
        #expect(try fixture.send(0x01, other).0 == .pinAuthInvalid)
        // A MAC under a token the key never issued.
        let forged = Self.withToken(CeremonyTests.makeCredential(), client, [UInt8](repeating: 9, count: 32), paramKey: 8)
        #expect(try fixture.send(0x01, forged).0 == .pinAuthInvalid)
        #expect(try fixture.send(0x01, Self.withToken(CeremonyTests.makeCredential(), client, token, paramKey: 8)).0 == .ok)
    }

    @Test func aCredentialThatNeedsVerificationIsSeenOnlyWithAToken() throws {
        let fixture = try KeyFixture()
        let client = try PINClient(fixture, .two)
        #expect(try client.setPIN("a1b2c3d4") == .ok)
        let token = try #require(try client.token("a1b2c3d4").1)
        let protected = ExtensionTests.withExtensions(CeremonyTests.makeCredential(), [(.text("credProtect"), .int(3))], key: 6)
        let made = try #require(fixture.send(0x01, Self.withToken(protected, client, token, paramKey: 8)).1)
        let (id, _) = try CeremonyTests.attested(try #require(made[.int(2)]?.bytesValue))
        #expect(try fixture.send(0x02, CeremonyTests.getAssertion(allow: [id])).0 == .noCredentials)
        let signIn = try #require(try client.token("a1b2c3d4", permissions: 0x02).1)
        let (status, assertion) = try fixture.send(0x02, Self.withToken(CeremonyTests.getAssertion(allow: [id]), client, signIn, paramKey: 6))
        #expect(status == .ok && assertion?[.int(1)]?[.text("id")] == .bytes(id))
    }

    @Test func aResetForgetsThePINAndEndsTheToken() throws {
        // python-fido2's tests/device/test_clientpin.py::test_set_and_reset.
        let fixture = try KeyFixture()
        let client = try PINClient(fixture, .one)
        #expect(try client.setPIN("a1b2c3d4") == .ok)
        #expect(try client.token("123456").0 == .pinInvalid)
        let token = try #require(try client.token("a1b2c3d4").1)
        #expect(try fixture.send(0x07).0 == .ok)
        let (_, info) = try fixture.send(0x04)
        #expect(info?[.int(0x04)]?[.text("clientPin")] == .bool(false))
        #expect(try client.retries().0 == .pinNotSet)
        #expect(try fixture.send(0x01, Self.withToken(CeremonyTests.makeCredential(), client, token, paramKey: 8)).0 == .pinNotSet)
        #expect(throws: CTAPStatus.pinAuthInvalid) {
            try fixture.key.authorize(client.param(token, CeremonyTests.hash), version: 1, message: CeremonyTests.hash,
                                      permission: .makeCredential, rpId: "example.com")
        }
        #expect(try client.setPIN("a1b2c3d4") == .ok)
        #expect(try client.retries().1 == 8)
    }
}
