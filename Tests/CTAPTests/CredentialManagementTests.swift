import CTAP
import Session
import Testing

/// authenticatorCredentialManagement (and its preview command 0x41), and the largeBlobKey
/// extension of the ceremonies.
@Suite struct CredentialManagementTests {
    static func management(_ subcommand: Int, _ parameters: [(CBORValue, CBORValue)]? = nil,
                           extra: [(CBORValue, CBORValue)] = []) -> CBORValue {
        var members: [(CBORValue, CBORValue)] = [(.int(1), .int(subcommand))]
        if let parameters { members.append((.int(2), .map(parameters))) }
        return .map(members + extra)
    }

    @Test func everySubcommandButTheNextOnesNeedsAToken() throws {
        let fixture = try KeyFixture()
        for command: UInt8 in [0x0A, 0x41] {
            for subcommand in [1, 2, 4, 6, 7] {
                #expect(try fixture.send(command, Self.management(subcommand)).0 == .puatRequired, "\(command) \(subcommand)")
            }
            let param: [(CBORValue, CBORValue)] = [(.int(4), .bytes([UInt8](repeating: 0, count: 16)))]
            #expect(try fixture.send(command, Self.management(1, extra: param)).0 == .missingParameter)
            #expect(try fixture.send(command, Self.management(1, extra: param + [(.int(3), .int(7))])).0 == .invalidParameter)
            // A token needs a PIN first.
            #expect(try fixture.send(command, Self.management(1, extra: param + [(.int(3), .int(1))])).0 == .pinNotSet)
        }
        try fixture.session.enrollPIN(secret("12345678"), device: "key")
        let param: [(CBORValue, CBORValue)] = [(.int(3), .int(2)), (.int(4), .bytes([UInt8](repeating: 0, count: 32)))]
        #expect(try fixture.send(0x0A, Self.management(1, extra: param)).0 == .pinAuthInvalid)
    }

    @Test func malformedRequestsAnswerTheSpecsStatus() throws {
        let fixture = try KeyFixture()
        #expect(try fixture.send(0x0A, .map([])).0 == .missingParameter)
        #expect(try fixture.send(0x0A, .map([(.int(1), .text("one"))])).0 == .cborUnexpectedType)
        #expect(try fixture.send(0x0A, Self.management(8)).0 == .invalidSubcommand)
        #expect(try fixture.send(0x0A, Self.management(0)).0 == .invalidSubcommand)
        #expect(try fixture.send(0x0A, .map([(.int(1), .int(1)), (.int(2), .text("not a map"))])).0 == .cborUnexpectedType)
    }

    @Test func aNextSubcommandWithNoEnumerationUnderWayIsNotAllowed() throws {
        let fixture = try KeyFixture()
        #expect(try fixture.send(0x0A, Self.management(3)).0 == .notAllowed)
        #expect(try fixture.send(0x0A, Self.management(5)).0 == .notAllowed)
        #expect(try fixture.send(0x41, Self.management(5)).0 == .notAllowed)
    }

    // MARK: - largeBlobKey

    static func makeCredential(largeBlobKey: CBORValue, rk: Bool = true, user: [UInt8] = [1, 2, 3]) -> CBORValue {
        guard case .map(var members) = CeremonyTests.makeCredential(user: user, rk: rk) else { return .null }
        members.append((.int(6), .map([(.text("largeBlobKey"), largeBlobKey)])))
        return .map(members)
    }

    static func getAssertion(allow: [[UInt8]] = [], largeBlobKey: CBORValue) -> CBORValue {
        guard case .map(var members) = CeremonyTests.getAssertion(allow: allow) else { return .null }
        members.append((.int(4), .map([(.text("largeBlobKey"), largeBlobKey)])))
        return .map(members)
    }

    @Test func aCredentialMadeWithALargeBlobKeyHandsTheSameOneToEverySignIn() throws {
        let fixture = try KeyFixture()
        let (status, made) = try fixture.send(0x01, Self.makeCredential(largeBlobKey: .bool(true)))
        #expect(status == .ok)
        let key = try #require(made?[.int(0x05)]?.bytesValue)
        #expect(key.count == 32)
        let (id, _) = try CeremonyTests.attested(try #require(made?[.int(2)]?.bytesValue))
        let signed = try fixture.send(0x02, Self.getAssertion(allow: [id], largeBlobKey: .bool(true)))
        #expect(signed.0 == .ok)
        #expect(signed.1?[.int(0x07)] == .bytes(key))
        // Not asked for, not given.
        #expect(try fixture.send(0x02, CeremonyTests.getAssertion(allow: [id])).1?[.int(0x07)] == nil)
        // Another credential has another key; one made without a key has none.
        let other = try #require(try fixture.send(0x01, Self.makeCredential(largeBlobKey: .bool(true), user: [9])).1?[.int(0x05)]?.bytesValue)
        #expect(other != key)
        let plain = try #require(fixture.send(0x01, CeremonyTests.makeCredential(user: [7])).1)
        #expect(plain[.int(0x05)] == nil)
        let (plainId, _) = try CeremonyTests.attested(try #require(plain[.int(2)]?.bytesValue))
        let unkeyed = try fixture.send(0x02, Self.getAssertion(allow: [plainId], largeBlobKey: .bool(true)))
        #expect(unkeyed.0 == .ok)
        #expect(unkeyed.1?[.int(0x07)] == nil)
        // A discoverable sign-in's next assertions carry theirs too.
        let first = try fixture.send(0x02, Self.getAssertion(largeBlobKey: .bool(true)))
        #expect(first.1?[.int(0x05)] == .int(3))
        var keys = [first.1?[.int(0x07)]]
        keys.append(try fixture.send(0x08).1?[.int(0x07)])
        keys.append(try fixture.send(0x08).1?[.int(0x07)])
        #expect(keys == [nil, .bytes(other), .bytes(key)])
    }

    @Test func largeBlobKeyIsOnlyTrueAndOnlyForADiscoverableCredential() throws {
        let fixture = try KeyFixture()
        #expect(try fixture.send(0x01, Self.makeCredential(largeBlobKey: .bool(true), rk: false)).0 == .invalidOption)
        #expect(try fixture.send(0x01, Self.makeCredential(largeBlobKey: .bool(false))).0 == .invalidOption)
        #expect(try fixture.send(0x01, Self.makeCredential(largeBlobKey: .int(1))).0 == .cborUnexpectedType)
        #expect(try fixture.session.keyCredentials(device: "key").isEmpty)
        #expect(try fixture.send(0x02, Self.getAssertion(largeBlobKey: .bool(false))).0 == .invalidOption)
    }
}
