import Foundation
import Testing
@testable import VirtualAuthenticator

/// PIN/UV auth protocols one and two (CTAP 2.1 §6.5.6, §6.5.7) against python-fido2's own
/// implementation: Tests/interop/fixtures/pin-uv-auth-protocols.json holds what its
/// PinProtocolV1/V2 computed with fixed keys (make_pin_uv_auth_vectors.py, beside it, says how).
@Suite struct PinUvAuthProtocolTests {
    struct Vectors: Decodable {
        struct Entry: Decodable {
            let version: Int
            let authenticatorScalar, authenticatorX, authenticatorY, platformX, platformY: String
            let platformAlg: Int
            let sharedSecret: String
            let iv: String?
            let pin, pinHashEnc, newPin, newPinEnc, setPinParam, changePinParam: String
            let token, tokenEnc, clientDataHash, pinUvAuthParam: String
        }
        struct Point: Decodable { let x, y: String }
        let offCurve: Point
        let protocols: [Entry]
    }

    static let vectors: Vectors = {
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        let data = try! Data(contentsOf: tests.appendingPathComponent("interop/fixtures/pin-uv-auth-protocols.json"))
        return try! JSONDecoder().decode(Vectors.self, from: data)
    }()

    /// The authenticator's side of a vector: its known key-agreement key, and protocol two's IV
    /// as the randomness its encrypt draws.
    static func authenticator(_ v: Vectors.Entry) throws -> PinUvAuthProtocol {
        let key = try KeyAgreementKey.known(scalar: hexBytes(v.authenticatorScalar), x: hexBytes(v.authenticatorX), y: hexBytes(v.authenticatorY))
        let iv = v.iv.map(hexBytes) ?? []
        return PinUvAuthProtocol(try #require(PinUvAuthProtocol.Version(rawValue: v.version)), keyAgreementKey: key,
                                 random: RandomSource { count in count == 16 ? iv : [UInt8](repeating: 0xA5, count: count) })
    }

    static func platformKey(_ v: Vectors.Entry) -> CBORValue {
        let members: [(CBORValue, CBORValue)] = [(.int(1), .int(2)), (.int(3), .int(v.platformAlg)), (.int(-1), .int(1)),
                                                 (.int(-2), .bytes(hexBytes(v.platformX))), (.int(-3), .bytes(hexBytes(v.platformY)))]
        return .map(members)
    }

    @Test(arguments: [1, 2])
    func theSharedSecretIsPythonFido2s(_ version: Int) throws {
        let v = try #require(Self.vectors.protocols.first { $0.version == version })
        let rules = try Self.authenticator(v)
        let members: [(CBORValue, CBORValue)] = [(.int(1), .int(2)), (.int(3), .int(-25)), (.int(-1), .int(1)),
                                                 (.int(-2), .bytes(hexBytes(v.authenticatorX))), (.int(-3), .bytes(hexBytes(v.authenticatorY)))]
        #expect(rules.getPublicKey() == CBORValue.map(members))
        #expect(try rules.decapsulate(Self.platformKey(v)) == hexBytes(v.sharedSecret))
    }

    @Test(arguments: [1, 2])
    func whatTheClientEncryptsDecryptsAndWhatTheKeyEncryptsIsPythonFido2s(_ version: Int) throws {
        let v = try #require(Self.vectors.protocols.first { $0.version == version })
        let rules = try Self.authenticator(v)
        let secret = hexBytes(v.sharedSecret)
        #expect(rules.decrypt(key: secret, hexBytes(v.pinHashEnc)) == Array(SHA256.hash(Array(v.pin.utf8)).prefix(16)))
        var padded = Array(v.newPin.utf8)
        padded += [UInt8](repeating: 0, count: 64 - padded.count)
        #expect(rules.decrypt(key: secret, hexBytes(v.newPinEnc)) == padded)
        #expect(rules.encrypt(key: secret, hexBytes(v.token)) == hexBytes(v.tokenEnc))
    }

    @Test(arguments: [1, 2])
    func theMACsArePythonFido2s(_ version: Int) throws {
        let v = try #require(Self.vectors.protocols.first { $0.version == version })
        let rules = try Self.authenticator(v)
        let secret = hexBytes(v.sharedSecret), newPinEnc = hexBytes(v.newPinEnc), pinHashEnc = hexBytes(v.pinHashEnc)
        #expect(rules.authenticate(key: secret, newPinEnc) == hexBytes(v.setPinParam))
        #expect(rules.verify(key: secret, newPinEnc + pinHashEnc, signature: hexBytes(v.changePinParam)))
        #expect(rules.verify(key: hexBytes(v.token), hexBytes(v.clientDataHash), signature: hexBytes(v.pinUvAuthParam)))
        #expect(hexBytes(v.pinUvAuthParam).count == (version == 1 ? 16 : 32))
    }

    @Test(arguments: [1, 2])
    func verifyRefusesAnAlteredOrShortenedMAC(_ version: Int) throws {
        let v = try #require(Self.vectors.protocols.first { $0.version == version })
        let rules = try Self.authenticator(v)
        let token = hexBytes(v.token), message = hexBytes(v.clientDataHash), mac = hexBytes(v.pinUvAuthParam)
        for index in mac.indices {
            var altered = mac
            altered[index] ^= 0x01
            #expect(!rules.verify(key: token, message, signature: altered))
        }
        #expect(!rules.verify(key: token, message, signature: Array(mac.dropLast())))
        #expect(!rules.verify(key: token, message, signature: mac + [0]))
        #expect(!rules.verify(key: token, message, signature: []))
        // Protocol two's MAC cut to protocol one's 16 bytes is not protocol two's.
        if version == 2 { #expect(!rules.verify(key: token, message, signature: Array(mac.prefix(16)))) }
    }

    @Test(arguments: [1, 2])
    func aPointOffTheCurveHasNoSharedSecret(_ version: Int) throws {
        let v = try #require(Self.vectors.protocols.first { $0.version == version })
        let rules = try Self.authenticator(v)
        let off = Self.vectors.offCurve
        let offMembers: [(CBORValue, CBORValue)] = [(.int(1), .int(2)), (.int(3), .int(-25)), (.int(-1), .int(1)),
                                                    (.int(-2), .bytes(hexBytes(off.x))), (.int(-3), .bytes(hexBytes(off.y)))]
        let key = CBORValue.map(offMembers)
        #expect(try rules.decapsulate(key) == nil)
        // Nor a key of another shape: EC2 of another curve, another algorithm, short coordinates.
        let good = Self.platformKey(v)
        guard case .map(let members) = good else { return }
        let changes: [(Int, CBORValue)] = [(-1, .int(2)), (1, .int(1)), (3, .int(-7)), (-2, .bytes([1, 2, 3]))]
        for (k, replacement) in changes {
            let changed = CBORValue.map(members.map { $0.0 == .int(k) ? ($0.0, replacement) : $0 })
            #expect(try rules.decapsulate(changed) == nil, "member \(k)")
        }
        // Without its algorithm it is still the platform's point.
        #expect(try rules.decapsulate(.map(members.filter { $0.0 != .int(3) })) == hexBytes(v.sharedSecret))
    }

    @Test(arguments: [1, 2])
    func encryptionTakesWholeBlocksOnly(_ version: Int) throws {
        let v = try #require(Self.vectors.protocols.first { $0.version == version })
        let rules = try Self.authenticator(v)
        let secret = hexBytes(v.sharedSecret)
        #expect(rules.encrypt(key: secret, [UInt8](repeating: 1, count: 15)) == nil)
        #expect(rules.decrypt(key: secret, [UInt8](repeating: 1, count: version == 1 ? 17 : 33)) == nil)
        #expect(rules.decrypt(key: secret, [UInt8](repeating: 1, count: version == 1 ? 0 : 15)) == (version == 1 ? [] : nil))
        // A key of the other protocol's length is none of this one's.
        #expect(rules.decrypt(key: Array(secret.prefix(version == 1 ? 16 : 32)), hexBytes(v.pinHashEnc)) == nil)
    }

    @Test(arguments: [PinUvAuthProtocol.Version.one, .two])
    func aPlatformAndAKeyAgreeOnOneSecret(_ version: PinUvAuthProtocol.Version) throws {
        var key = try PinUvAuthProtocol(version)
        let (platformKey, secret) = try #require(try PinUvAuthProtocol.encapsulate(version, peerCoseKey: key.getPublicKey()))
        #expect(try key.decapsulate(platformKey) == secret)
        #expect(secret.count == (version == .one ? 32 : 64))
        // After regenerate() the same platform key agrees another secret: a PIN sent under the old
        // one no longer decrypts.
        try key.regenerate()
        #expect(try key.decapsulate(platformKey) != secret)
        let token = key.pinUvAuthToken
        key.resetPinUvAuthToken()
        #expect(key.pinUvAuthToken != token && key.pinUvAuthToken.count == 32)
    }
}
