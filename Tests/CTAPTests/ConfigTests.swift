import CTAP
import Session
import Testing
import TestSupport

/// authenticatorConfig: toggleAlwaysUv and setMinPINLength, and what they change in
/// authenticatorGetInfo and the ceremonies. A key with no PIN takes them without a token.
@Suite struct ConfigTests {
    static func config(_ subcommand: Int, _ parameters: [(CBORValue, CBORValue)]? = nil, extra: [(CBORValue, CBORValue)] = []) -> CBORValue {
        var members: [(CBORValue, CBORValue)] = [(.int(1), .int(subcommand))]
        if let parameters { members.append((.int(2), .map(parameters))) }
        return .map(members + extra)
    }

    static func minPINLength(_ length: Int? = nil, rpIds: [String]? = nil, force: Bool? = nil) -> CBORValue {
        var members = [(CBORValue, CBORValue)]()
        if let length { members.append((.int(1), .int(length))) }
        if let rpIds { members.append((.int(2), .array(rpIds.map { .text($0) }))) }
        if let force { members.append((.int(3), .bool(force))) }
        return config(3, members)
    }

    static func info(_ fixture: some KeySending) throws -> CBORValue {
        let (status, info) = try fixture.send(0x04)
        #expect(status == .ok)
        return try #require(info)
    }

    @Test func getInfoOffersTheManagementCommandsAndTheDefaults() throws {
        let fixture = try KeyFixture()
        let info = try Self.info(fixture)
        let options = try #require(info[.int(0x04)])
        for name in ["credMgmt", "credentialMgmtPreview", "largeBlobs", "authnrCfg", "setMinPINLength", "makeCredUvNotRqd"] {
            #expect(options[.text(name)] == .bool(true), "\(name)")
        }
        #expect(options[.text("alwaysUv")] == .bool(false))
        #expect(options[.text("ep")] == nil)
        guard case .array(let extensions)? = info[.int(0x02)] else { Issue.record("no extensions"); return }
        #expect(extensions.contains(.text("largeBlobKey")))
        #expect(info[.int(0x0C)] == .bool(false))
        #expect(info[.int(0x0D)] == .int(4))
        #expect(info[.int(0x10)] == .int(8))
    }

    @Test func alwaysUvMakesEveryCeremonyThatTouchesNeedAToken() throws {
        let fixture = try KeyFixture()
        let made = try #require(fixture.send(0x01, CeremonyTests.makeCredential()).1)
        let (id, _) = try CeremonyTests.attested(try #require(made[.int(2)]?.bytesValue))
        #expect(try fixture.send(0x0D, Self.config(2)).0 == .ok)
        let options = try #require(try Self.info(fixture)[.int(0x04)])
        #expect(options[.text("alwaysUv")] == .bool(true))
        #expect(options[.text("makeCredUvNotRqd")] == .bool(false))
        #expect(try fixture.send(0x01, CeremonyTests.makeCredential(rk: false)).0 == .puatRequired)
        #expect(try fixture.send(0x02, CeremonyTests.getAssertion(allow: [id])).0 == .puatRequired)
        // A silent assertion asks no touch, and needs no token.
        #expect(try fixture.send(0x02, CeremonyTests.getAssertion(allow: [id], up: false)).0 == .ok)
        // With alwaysUv, the other subcommand needs a token even without a PIN; turning it off does not.
        #expect(try fixture.send(0x0D, Self.minPINLength(6)).0 == .puatRequired)
        #expect(try fixture.send(0x0D, Self.config(2)).0 == .ok)
        #expect(try Self.info(fixture)[.int(0x04)]?[.text("alwaysUv")] == .bool(false))
        #expect(try fixture.send(0x01, CeremonyTests.makeCredential(rk: false)).0 == .ok)
    }

    @Test func theMinimumPINLengthIsOnlyRaised() throws {
        let fixture = try KeyFixture()
        #expect(try fixture.send(0x0D, Self.minPINLength(6)).0 == .ok)
        #expect(try Self.info(fixture)[.int(0x0D)] == .int(6))
        #expect(try fixture.send(0x0D, Self.minPINLength(5)).0 == .pinPolicyViolation)
        #expect(try fixture.send(0x0D, Self.minPINLength(64)).0 == .pinPolicyViolation)
        #expect(try fixture.send(0x0D, Self.minPINLength(6)).0 == .ok)
        #expect(try fixture.send(0x0D, Self.minPINLength(63)).0 == .ok)
        #expect(try Self.info(fixture)[.int(0x0D)] == .int(63))
        // No PIN to force a change of.
        #expect(try fixture.send(0x0D, Self.minPINLength(force: true)).0 == .pinNotSet)
        #expect(try Self.info(fixture)[.int(0x0C)] == .bool(false))
    }

    @Test func minPinLengthIsReportedOnlyToTheRPIDsNamed() throws {
        let fixture = try KeyFixture()
        #expect(try fixture.send(0x0D, Self.minPINLength(7, rpIds: ["example.com"])).0 == .ok)
        for (rp, reported) in [("example.com", true), ("other.example", false)] {
            guard case .map(var members) = CeremonyTests.makeCredential(rp: rp) else { return }
            members.append((.int(6), .map([(.text("minPinLength"), .bool(true))])))
            let (status, made) = try fixture.send(0x01, .map(members))
            #expect(status == .ok)
            let data = try #require(made?[.int(2)]?.bytesValue)
            let (_, extensions) = try CeremonyTests.attestedExtensions(data)
            #expect(extensions?[.text("minPinLength")] == (reported ? .int(7) : nil), "\(rp)")
        }
        // More RP IDs than maxRPIDsForSetMinPINLength.
        #expect(try fixture.send(0x0D, Self.minPINLength(rpIds: (0..<9).map { "rp\($0).example" })).0 == .invalidLength)
        #expect(try fixture.send(0x0D, Self.config(3, [(.int(2), .array([.int(1)]))])).0 == .cborUnexpectedType)
    }

    @Test func withAPINSetConfigNeedsATokenAndUnknownSubcommandsAreRefused() throws {
        let fixture = try KeyFixture()
        #expect(try fixture.send(0x0D, Self.config(1)).0 == .invalidSubcommand)  // no enterprise attestation
        #expect(try fixture.send(0x0D, Self.config(0xFF)).0 == .invalidSubcommand)
        #expect(try fixture.send(0x0D, .map([])).0 == .missingParameter)
        #expect(try fixture.send(0x0D, Self.config(3)).0 == .missingParameter)
        try fixture.session.enrollPIN(secret("12345678"), device: "key")
        #expect(try fixture.send(0x0D, Self.config(2)).0 == .puatRequired)
        let param: [(CBORValue, CBORValue)] = [(.int(4), .bytes([UInt8](repeating: 0, count: 32)))]
        #expect(try fixture.send(0x0D, Self.config(2, extra: param)).0 == .missingParameter)
        #expect(try fixture.send(0x0D, Self.config(2, extra: param + [(.int(3), .int(9))])).0 == .invalidParameter)
        #expect(try fixture.send(0x0D, Self.config(2, extra: param + [(.int(3), .int(2))])).0 == .pinAuthInvalid)
        #expect(try Self.info(fixture)[.int(0x04)]?[.text("alwaysUv")] == .bool(false))
    }

    @Test func aDeviceResetClearsTheKeysSettingsAndLargeBlobs() throws {
        let fixture = try KeyFixture()
        #expect(try fixture.send(0x0D, Self.minPINLength(8)).0 == .ok)
        let array = LargeBlobTests.array(entryOf: 5)
        #expect(try LargeBlobTests.write(array, to: fixture) == [.ok])
        try fixture.session.change(.reset, device: "key")
        #expect(try Self.info(fixture)[.int(0x0D)] == .int(4))
        #expect(try LargeBlobTests.read(fixture) == KeyLargeBlobs.initial)
    }

    @Test func theSettingsOutliveTheKeyAndAResetBringsBackTheDefaults() throws {
        try withTemporaryDirectory { dir in
            do {
                let first = try VaultKey(creating: dir + "/vault")
                #expect(try first.send(0x0D, Self.minPINLength(9, rpIds: ["example.com", "Bücher.example"])).0 == .ok)
                #expect(try first.send(0x0D, Self.config(2)).0 == .ok)
                #expect(try first.send(0x0D, Self.config(2, [])).0 == .ok)
                #expect(try first.send(0x0D, Self.config(2)).0 == .ok)
            }
            let key = try VaultKey(opening: dir + "/vault")
            let info = try Self.info(key)
            #expect(info[.int(0x04)]?[.text("alwaysUv")] == .bool(true))
            #expect(info[.int(0x0D)] == .int(9))
            #expect(try key.session.keyFacts(device: "key").settings.minPINLengthRPIDs == ["example.com", "Bücher.example"])
            #expect(try key.send(0x07).0 == .ok)
            let reset = try Self.info(key)
            #expect(reset[.int(0x04)]?[.text("alwaysUv")] == .bool(false))
            #expect(reset[.int(0x0D)] == .int(4))
        }
    }
}
