import CTAP
import Foundation
import Session
import Testing

/// authenticatorMakeCredential, GetAssertion and GetNextAssertion with the CBOR a client sends.
@Suite struct CeremonyTests {
    static let hash = [UInt8](repeating: 0x5A, count: 32)

    static func makeCredential(rp: String = "example.com", user: [UInt8] = [1, 2, 3], alg: Int = -7, rk: Bool = true,
                               exclude: [[UInt8]] = []) -> CBORValue {
        var members: [(CBORValue, CBORValue)] = [
            (.int(1), .bytes(hash)),
            (.int(2), .map([(.text("id"), .text(rp)), (.text("name"), .text("Example"))])),
            (.int(3), .map([(.text("id"), .bytes(user)), (.text("name"), .text("ann")), (.text("displayName"), .text("Ann"))])),
            (.int(4), .array([.map([(.text("alg"), .int(alg)), (.text("type"), .text("public-key"))])])),
        ]
        if !exclude.isEmpty {
            members.append((.int(5), .array(exclude.map { .map([(.text("id"), .bytes($0)), (.text("type"), .text("public-key"))]) })))
        }
        members.append((.int(7), .map([(.text("rk"), .bool(rk))])))
        return .map(members)
    }

    static func getAssertion(rp: String = "example.com", allow: [[UInt8]] = [], up: Bool? = nil) -> CBORValue {
        var members: [(CBORValue, CBORValue)] = [(.int(1), .text(rp)), (.int(2), .bytes(hash))]
        if !allow.isEmpty {
            members.append((.int(3), .array(allow.map { .map([(.text("id"), .bytes($0)), (.text("type"), .text("public-key"))]) })))
        }
        if let up { members.append((.int(5), .map([(.text("up"), .bool(up))]))) }
        return .map(members)
    }

    /// The credential id and COSE public key in a registration's authenticator data.
    static func attested(_ authenticatorData: [UInt8]) throws -> (id: [UInt8], key: COSEKey) {
        let length = Int(authenticatorData[53]) << 8 | Int(authenticatorData[54])
        let id = Array(authenticatorData[55..<55 + length])
        let (cose, _) = try CBORValue.decodePrefix(Array(authenticatorData[(55 + length)...]))
        return (id, try #require(COSEKey(cbor: cose)))
    }

    @Test func aRegistrationIsAttestedAndItsAssertionVerifies() throws {
        let fixture = try KeyFixture()
        let (status, made) = try fixture.send(0x01, Self.makeCredential())
        #expect(status == .ok)
        let registration = try #require(made)
        #expect(registration[.int(1)] == .text("packed"))
        let statement = try #require(registration[.int(3)])
        #expect(statement[.text("x5c")] != nil)
        let authenticatorData = try #require(registration[.int(2)]?.bytesValue)
        #expect(authenticatorData[32] & 0x45 == 0x41)  // UP and AT; no UV without a PIN token
        let (id, key) = try Self.attested(authenticatorData)
        #expect(id.count == AuthenticatorProfile.securityKey.credentialIdLength)

        let (signed, assertion) = try fixture.send(0x02, Self.getAssertion(allow: [id]))
        #expect(signed == .ok)
        let data = try #require(assertion?[.int(2)]?.bytesValue)
        let signature = try #require(assertion?[.int(3)]?.bytesValue)
        #expect(SignatureVerifier.verify(signature: signature, message: data + Self.hash, spki: key.subjectPublicKeyInfo))
        #expect(!SignatureVerifier.verify(signature: signature, message: data + [UInt8](repeating: 0, count: 32), spki: key.subjectPublicKeyInfo))
        // The security key counts signatures on one global counter.
        #expect(Array(data[33..<37]) != [0, 0, 0, 0])
        #expect(assertion?[.int(1)]?[.text("id")] == .bytes(id))
    }

    @Test func aCredentialMadeWithoutRkIsUsedOnlyWhenListedAndHasAWrappedKeysIdLength() throws {
        let fixture = try KeyFixture()
        let made = try #require(fixture.send(0x01, Self.makeCredential(rk: false)).1)
        let (id, _) = try Self.attested(try #require(made[.int(2)]?.bytesValue))
        #expect(id.count == AuthenticatorProfile.securityKey.wrappedCredentialIdLength)
        #expect(try fixture.send(0x02, Self.getAssertion()).0 == .noCredentials)
        #expect(try fixture.send(0x02, Self.getAssertion(allow: [id])).0 == .ok)
        #expect(try fixture.session.keyCredentials(device: "key").isEmpty)
        #expect(try fixture.session.keyCredentials(device: "key", discoverableOnly: false).map(\.id) == [id])
        // A second one for the same user replaces nothing; a discoverable one does not replace it either.
        _ = try fixture.send(0x01, Self.makeCredential(rk: false))
        _ = try fixture.send(0x01, Self.makeCredential(rk: true))
        #expect(try fixture.session.keyCredentials(device: "key", discoverableOnly: false).count == 3)
        #expect(try fixture.send(0x07).0 == .ok)
        #expect(try fixture.session.keyCredentials(device: "key", discoverableOnly: false).isEmpty)
    }

    @Test func aDiscoverableSignInOffersEveryCredentialNewestFirstThenNextAssertions() throws {
        let fixture = try KeyFixture()
        var ids = [[UInt8]]()
        for user in 1...3 {
            let made = try #require(fixture.send(0x01, Self.makeCredential(user: [UInt8(user)])).1)
            ids.append(try Self.attested(try #require(made[.int(2)]?.bytesValue)).id)
        }
        let (status, first) = try fixture.send(0x02, Self.getAssertion())
        #expect(status == .ok)
        #expect(first?[.int(5)] == .int(3))
        #expect(first?[.int(1)]?[.text("id")] == .bytes(ids[2]))
        // Without user verification, the user's id alone.
        #expect(first?[.int(4)] == .map([(.text("id"), .bytes([3]))]))
        let second = try fixture.send(0x08)
        #expect(second.0 == .ok)
        #expect(second.1?[.int(1)]?[.text("id")] == .bytes(ids[1]))
        #expect(second.1?[.int(5)] == nil)
        #expect(try fixture.send(0x08).1?[.int(1)]?[.text("id")] == .bytes(ids[0]))
        #expect(try fixture.send(0x08).0 == .notAllowed)
    }

    @Test func anyOtherCommandEndsTheNextAssertions() throws {
        let fixture = try KeyFixture()
        for user in 1...2 { _ = try fixture.send(0x01, Self.makeCredential(user: [UInt8(user)])) }
        #expect(try fixture.send(0x02, Self.getAssertion()).0 == .ok)
        #expect(try fixture.send(0x04).0 == .ok)
        #expect(try fixture.send(0x08).0 == .notAllowed)
    }

    @Test func anExcludedCredentialIsRefusedAfterATouchAndNothingIsStored() throws {
        let fixture = try KeyFixture()
        let made = try #require(fixture.send(0x01, Self.makeCredential()).1)
        let (id, _) = try Self.attested(try #require(made[.int(2)]?.bytesValue))
        #expect(try fixture.send(0x01, Self.makeCredential(user: [9], exclude: [id])).0 == .credentialExcluded)
        #expect(try fixture.session.passkeys(device: "key").count == 1)
    }

    @Test func anAlgorithmTheModelDoesNotMakeIsUnsupported() throws {
        let fixture = try KeyFixture()
        #expect(try fixture.send(0x01, Self.makeCredential(alg: -36)).0 == .unsupportedAlgorithm)
    }

    @Test func malformedParametersAnswerTheSpecsStatus() throws {
        let fixture = try KeyFixture()
        #expect(fixture.key.cbor([0x01, 0xA1, 0x01], progress: CTAPProgress()) == [CTAPStatus.invalidCBOR.rawValue])
        #expect(try fixture.send(0x01, .array([])).0 == .cborUnexpectedType)
        #expect(try fixture.send(0x01, .map([(.int(1), .bytes(Self.hash))])).0 == .missingParameter)
        #expect(try fixture.send(0x01, .map([(.int(1), .text("no")), (.int(2), .map([])), (.int(3), .map([])), (.int(4), .array([]))])).0
                == .cborUnexpectedType)
        #expect(try fixture.send(0x02, .map([(.int(1), .text("example.com"))])).0 == .missingParameter)
        #expect(try fixture.send(0x02, .map([(.int(1), .text("example.com")), (.int(2), .bytes([1]))])).0 == .invalidLength)
        #expect(try fixture.send(0x02, Self.getAssertion()).0 == .noCredentials)
    }

    @Test func aSilentAssertionNeedsNoTouchAndSaysSo() throws {
        let fixture = try KeyFixture()
        let made = try #require(fixture.send(0x01, Self.makeCredential()).1)
        let (id, _) = try Self.attested(try #require(made[.int(2)]?.bytesValue))
        fixture.key.touch.currentPolicy = .never
        let (status, assertion) = try fixture.send(0x02, Self.getAssertion(allow: [id], up: false))
        #expect(status == .ok)
        #expect(try #require(assertion?[.int(2)]?.bytesValue)[32] & 0x01 == 0)
    }

    @Test func aCancelWhileTheKeyWaitsForATouchEndsTheRequest() throws {
        let fixture = try KeyFixture(touch: Touch(policy: .never))
        let progress = CTAPProgress()
        let canceler = Thread {
            while progress.status != .upNeeded { usleep(1000) }
            progress.cancel()
        }
        canceler.start()
        #expect(try fixture.send(0x01, Self.makeCredential(), progress: progress).0 == .keepaliveCancel)
        #expect(try fixture.session.passkeys(device: "key").isEmpty)
    }

    @Test func anEmptyPinUvAuthParamAsksForATouchThenSaysNoPINIsSet() throws {
        let fixture = try KeyFixture()
        guard case .map(var members) = Self.makeCredential() else { return }
        members.append((.int(8), .bytes([])))
        members.append((.int(9), .int(1)))
        #expect(try fixture.send(0x01, .map(members)).0 == .pinNotSet)
    }
}

/// authenticatorReset and authenticatorSelection.
@Suite struct ResetTests {
    @Test func aResetDeletesTheKeysCredentialsButNotTheAccountsSyncedPasskeys() throws {
        let fixture = try KeyFixture(phone: true)
        _ = try fixture.session.register(RegisterRequest(device: "phone", caller: CallerContext(origin: "https://example.com"),
                                                         options: .built(CreationOptionsBuilder(rpId: "example.com"))))
        // The phone's synced passkey reaches the key's device, and the key keeps it out of sight.
        #expect(try fixture.session.passkeys(device: "key").count == 1)
        #expect(try fixture.send(0x02, CeremonyTests.getAssertion()).0 == .noCredentials)
        _ = try fixture.send(0x01, CeremonyTests.makeCredential())
        #expect(try fixture.session.keyCredentials(device: "key").count == 1)
        #expect(try fixture.send(0x07).0 == .ok)
        #expect(try fixture.session.keyCredentials(device: "key").isEmpty)
        #expect(try fixture.send(0x02, CeremonyTests.getAssertion()).0 == .noCredentials)
        #expect(try fixture.session.passkeys(device: "phone").count == 1)
        #expect(try fixture.session.passkeys(device: "key").count == 1)
    }

    /// A command without parameters followed by bytes is not that command: CTAP1_ERR_INVALID_LENGTH,
    /// as getInfo answers, and nothing done — a garbled message that starts with 0x07 wipes nothing.
    @Test func resetSelectionAndGetNextAssertionWithParametersAreAnInvalidLengthAndDoNothing() throws {
        let fixture = try KeyFixture()
        _ = try fixture.send(0x01, CeremonyTests.makeCredential(user: [1]))
        _ = try fixture.send(0x01, CeremonyTests.makeCredential(user: [2]))
        #expect(try fixture.send(0x02, CeremonyTests.getAssertion()).0 == .ok)
        for command: UInt8 in [0x07, 0x08, 0x0B] {
            #expect(try fixture.send(command, .map([])).0 == .invalidLength)
            #expect(fixture.key.cbor([command, 0x00], progress: CTAPProgress()) == [CTAPStatus.invalidLength.rawValue])
        }
        #expect(try fixture.session.keyCredentials(device: "key").count == 2)
    }

    @Test func aResetLongAfterPowerUpIsNotAllowed() throws {
        let fixture = try KeyFixture()
        fixture.key.poweredAt = Date().addingTimeInterval(-11)
        #expect(try fixture.send(0x07).0 == .notAllowed)
    }

    @Test func selectionWaitsForATouch() throws {
        let fixture = try KeyFixture(touch: Touch(policy: .after(milliseconds: 50)))
        #expect(try fixture.send(0x0B).0 == .ok)
        fixture.key.touch.queue([.ignore])
        let progress = CTAPProgress()
        let canceler = Thread {
            while progress.status != .upNeeded { usleep(1000) }
            progress.cancel()
        }
        canceler.start()
        #expect(try fixture.send(0x0B, progress: progress).0 == .keepaliveCancel)
    }
}

/// The extensions a key answers over CTAP (CTAP 2.1 §12).
@Suite struct ExtensionTests {
    static func withExtensions(_ base: CBORValue, _ extensions: [(CBORValue, CBORValue)], key: Int) -> CBORValue {
        guard case .map(var members) = base else { return base }
        members.append((.int(key), .map(extensions)))
        return .map(members)
    }

    @Test func credProtectThreeHidesTheCredentialFromASignInWithoutATokenEvenWhenListed() throws {
        let fixture = try KeyFixture()
        let made = try #require(fixture.send(0x01, Self.withExtensions(CeremonyTests.makeCredential(), [(.text("credProtect"), .int(3))], key: 6)).1)
        let data = try #require(made[.int(2)]?.bytesValue)
        #expect(data[32] & 0x80 != 0)  // ED: the credProtect output
        let (id, _) = try CeremonyTests.attested(data)
        #expect(try fixture.send(0x02, CeremonyTests.getAssertion(allow: [id])).0 == .noCredentials)
        #expect(try fixture.send(0x01, Self.withExtensions(CeremonyTests.makeCredential(), [(.text("credProtect"), .int(4))], key: 6)).0
                == .invalidParameter)
        #expect(try fixture.send(0x01, Self.withExtensions(CeremonyTests.makeCredential(), [(.text("credProtect"), .text("3"))], key: 6)).0
                == .cborUnexpectedType)
    }

    @Test func aCredBlobIsStoredAndReadBack() throws {
        let fixture = try KeyFixture()
        let blob = [UInt8](repeating: 7, count: 32)
        let made = try #require(fixture.send(0x01, Self.withExtensions(CeremonyTests.makeCredential(), [(.text("credBlob"), .bytes(blob))], key: 6)).1)
        let (id, _) = try CeremonyTests.attested(try #require(made[.int(2)]?.bytesValue))
        let (status, assertion) = try fixture.send(0x02, Self.withExtensions(CeremonyTests.getAssertion(allow: [id]), [(.text("credBlob"), .bool(true))], key: 4))
        #expect(status == .ok)
        let data = try #require(assertion?[.int(2)]?.bytesValue)
        #expect(data[32] & 0x80 != 0)
        let outputs = try CBORValue.decode(Array(data[37...]))
        #expect(outputs[.text("credBlob")] == .bytes(blob))
    }
}

/// hmac-secret over CTAP (CTAP 2.1 §12.5): the salts sent encrypted, the outputs back encrypted
/// in the signed authenticator data.
@Suite struct HMACSecretTests {
    static func input(_ client: PINClient, salts: [UInt8], tamper: Bool = false) throws -> CBORValue {
        let (keyAgreement, secret) = try client.encapsulate()
        let saltEnc = try client.encrypt(secret, salts)
        var saltAuth = client.rules.authenticate(key: secret, saltEnc)
        if tamper { saltAuth[0] ^= 1 }
        return .map([(.int(1), keyAgreement), (.int(2), .bytes(saltEnc)), (.int(3), .bytes(saltAuth)),
                     (.int(4), .int(client.version.rawValue))])
    }

    /// The decrypted hmac-secret output of a sign-in with `salts`, decapsulated with the same secret.
    static func outputs(_ fixture: KeyFixture, _ version: PinUvAuthProtocol.Version, id: [UInt8], salts: [UInt8]) throws -> [UInt8] {
        let client = try PINClient(fixture, version)
        let (keyAgreement, secret) = try client.encapsulate()
        let saltEnc = try client.encrypt(secret, salts)
        let input = CBORValue.map([(.int(1), keyAgreement), (.int(2), .bytes(saltEnc)),
                                   (.int(3), .bytes(client.rules.authenticate(key: secret, saltEnc))), (.int(4), .int(version.rawValue))])
        let (status, assertion) = try fixture.send(0x02, ExtensionTests.withExtensions(CeremonyTests.getAssertion(allow: [id]),
                                                                                      [(.text("hmac-secret"), input)], key: 4))
        #expect(status == .ok)
        let data = try #require(assertion?[.int(2)]?.bytesValue)
        let sealed = try #require(try CBORValue.decode(Array(data[37...]))[.text("hmac-secret")]?.bytesValue)
        return try #require(client.rules.decrypt(key: secret, sealed))
    }

    @Test(arguments: [PinUvAuthProtocol.Version.one, .two])
    func theSameSaltGivesTheSameSecretOverEitherProtocolAndAnotherSaltAnother(version: PinUvAuthProtocol.Version) throws {
        let fixture = try KeyFixture()
        let made = try #require(fixture.send(0x01, ExtensionTests.withExtensions(CeremonyTests.makeCredential(), [(.text("hmac-secret"), .bool(true))], key: 6)).1)
        let (id, _) = try CeremonyTests.attested(try #require(made[.int(2)]?.bytesValue))
        let salt1 = [UInt8](repeating: 1, count: 32), salt2 = [UInt8](repeating: 2, count: 32)
        let one = try Self.outputs(fixture, version, id: id, salts: salt1)
        #expect(one.count == 32)
        #expect(try Self.outputs(fixture, version, id: id, salts: salt1) == one)
        let two = try Self.outputs(fixture, version, id: id, salts: salt1 + salt2)
        #expect(two.count == 64 && Array(two.prefix(32)) == one && Array(two.suffix(32)) != one)
    }

    @Test func aSaltAuthThatDoesNotVerifyIsRefused() throws {
        let fixture = try KeyFixture()
        let made = try #require(fixture.send(0x01, CeremonyTests.makeCredential()).1)
        let (id, _) = try CeremonyTests.attested(try #require(made[.int(2)]?.bytesValue))
        let client = try PINClient(fixture, .two)
        let bad = try Self.input(client, salts: [UInt8](repeating: 1, count: 32), tamper: true)
        #expect(try fixture.send(0x02, ExtensionTests.withExtensions(CeremonyTests.getAssertion(allow: [id]), [(.text("hmac-secret"), bad)], key: 4)).0
                == .pinAuthInvalid)
        let short = try Self.input(client, salts: [UInt8](repeating: 1, count: 48))
        #expect(try fixture.send(0x02, ExtensionTests.withExtensions(CeremonyTests.getAssertion(allow: [id]), [(.text("hmac-secret"), short)], key: 4)).0
                == .invalidLength)
    }
}

/// CTAP1/U2F in process: a registration kept where `vault check` finds nothing wrong with it.
@Suite struct U2FTests {
    @Test func aU2FRegistrationIsKeptAsAVaultCheckAcceptsAndAuthenticates() throws {
        let fixture = try KeyFixture()
        let challenge = [UInt8](repeating: 1, count: 32), application = [UInt8](repeating: 2, count: 32)
        let registration = fixture.key.msg([0, 0x01, 0, 0, 0, 0, 64] + challenge + application + [0, 0], progress: CTAPProgress())
        #expect(Array(registration.suffix(2)) == [0x90, 0x00])
        #expect(registration.first == 0x05)
        let handle = Array(registration[67..<(67 + Int(registration[66]))])
        #expect(handle.count == 64)
        _ = try fixture.session.checkVault(device: "key")
        let held = try fixture.session.keyCredentials(device: "key", discoverableOnly: false)
        #expect(held.map(\.rpId) == [Device.u2fRelyingParty(application)])
        let signed = fixture.key.msg([0, 0x02, 0x03, 0, 0, 0, 129] + challenge + application + [64] + handle + [0, 0], progress: CTAPProgress())
        #expect(Array(signed.suffix(2)) == [0x90, 0x00])
        #expect(signed.first == 0x01)
        let other = fixture.key.msg([0, 0x02, 0x03, 0, 0, 0, 129] + challenge + challenge + [64] + handle + [0, 0], progress: CTAPProgress())
        #expect(other == [0x6A, 0x80])
    }

    @Test func aKeyWhoseCounterIsAt4294967295AuthenticatesNoMoreAndKeepsIt() throws {
        // WebAuthn L3 §6.1.1: no count past 4294967295 exists; a wrap to 0 reads as a clone.
        let fixture = try KeyFixture()
        let challenge = [UInt8](repeating: 1, count: 32), application = [UInt8](repeating: 2, count: 32)
        let registration = fixture.key.msg([0, 0x01, 0, 0, 0, 0, 64] + challenge + application + [0, 0], progress: CTAPProgress())
        let handle = Array(registration[67..<(67 + Int(registration[66]))])
        _ = try fixture.session.setCredentialProperties(device: "key", credentialId: handle, eligible: nil, state: nil,
                                                        counter: .counting(from: UInt32.max))
        let refused = #expect(throws: SessionError.self) {
            _ = try fixture.session.keyU2FAuthenticate(device: "key", application: application, challenge: challenge, keyHandle: handle,
                                                       userPresent: true)
        }
        #expect(refused?.name == .notHandled)
        let signed = fixture.key.msg([0, 0x02, 0x03, 0, 0, 0, 129] + challenge + application + [64] + handle + [0, 0], progress: CTAPProgress())
        #expect(signed == [0x6A, 0x80])
        let held = try fixture.session.keyCredentials(device: "key", discoverableOnly: false)
        #expect(held.map(\.signCount) == [UInt32.max])
    }
}
