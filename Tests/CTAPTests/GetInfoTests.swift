import CTAP
import Session
import Testing

@Suite struct GetInfoTests {
    @Test func aSecurityKeyReportsItsModelVersionsAndNoPIN() throws {
        let fixture = try KeyFixture()
        let (status, info) = try fixture.send(0x04)
        #expect(status == .ok)
        let members = try #require(info)
        #expect(members[.int(0x01)] == .array([.text("FIDO_2_0"), .text("FIDO_2_1")]))
        #expect(members[.int(0x03)] == .bytes(AuthenticatorProfile.securityKey.aaguid))
        let options = try #require(members[.int(0x04)])
        #expect(options[.text("clientPin")] == .bool(false))
        #expect(options[.text("rk")] == .bool(true))
        #expect(members[.int(0x06)] == .array([.int(2), .int(1)]))
    }

    @Test func getInfoWithParametersIsAnInvalidLength() throws {
        let fixture = try KeyFixture()
        #expect(try fixture.send(0x04, .map([])).0 == .invalidLength)
    }

    @Test func anUnknownCommandIsInvalid() throws {
        let fixture = try KeyFixture()
        #expect(try fixture.send(0x03).0 == .invalidCommand)
        #expect(fixture.key.cbor([], progress: CTAPProgress()) == [CTAPStatus.invalidLength.rawValue])
    }
}

