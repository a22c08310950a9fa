import CTAP
import Foundation
import Session

/// A platform's side of authenticatorClientPIN (CTAP 2.1 §6.5.5), sending the CBOR a client sends
/// (python-fido2's ClientPin, byte for byte in the members it sends): the shared secret through
/// getKeyAgreement and encapsulate, then a subcommand with what it encrypts and MACs. The
/// protocol code is the key's own, checked against python-fido2's in PinUvAuthProtocolTests.
struct PINClient {
    let fixture: KeyFixture
    let version: PinUvAuthProtocol.Version
    /// The protocol's encrypt and authenticate, on the platform's side.
    let rules: PinUvAuthProtocol

    init(_ fixture: KeyFixture, _ version: PinUvAuthProtocol.Version) throws {
        self.fixture = fixture
        self.version = version
        rules = try PinUvAuthProtocol(version)
    }

    /// getKeyAgreement, then encapsulate: the platform's key-agreement key and the shared secret.
    func encapsulate() throws -> (keyAgreement: CBORValue, secret: [UInt8]) {
        let (status, answer) = try fixture.send(0x06, .map([(.int(1), .int(version.rawValue)), (.int(2), .int(2))]))
        guard status == .ok, let peer = answer?[.int(1)] else { throw ClientFailure.status(status) }
        guard let result = try PinUvAuthProtocol.encapsulate(version, peerCoseKey: peer) else { throw ClientFailure.badKey }
        return (result.keyAgreement, result.sharedSecret)
    }

    enum ClientFailure: Error { case status(CTAPStatus), badKey, badToken }

    /// `pin` as setPIN and changePIN send it: UTF-8, zero-padded to 64 bytes (python-fido2's
    /// `_pad_pin`, which pads a longer PIN on to a whole block after 64).
    static func padded(_ pin: [UInt8]) -> [UInt8] {
        var bytes = pin + [UInt8](repeating: 0, count: max(0, 64 - pin.count))
        bytes += [UInt8](repeating: 0, count: (16 - (bytes.count - 16) % 16) % 16)
        return bytes
    }

    static func pinHash(_ pin: String) -> [UInt8] { Array(SHA256.hash(Array(pin.utf8)).prefix(16)) }

    /// One subcommand's request: `members` after pinUvAuthProtocol and subCommand.
    func send(_ subcommand: Int, _ members: [(CBORValue, CBORValue)]) throws -> (CTAPStatus, CBORValue?) {
        try fixture.send(0x06, .map([(.int(1), .int(version.rawValue)), (.int(2), .int(subcommand))] + members))
    }

    func setPIN(_ pin: String) throws -> CTAPStatus { try setPIN(bytes: Array(pin.utf8)) }

    func setPIN(bytes pin: [UInt8]) throws -> CTAPStatus {
        let (keyAgreement, secret) = try encapsulate()
        let newPinEnc = try encrypt(secret, Self.padded(pin))
        return try send(0x03, [(.int(3), keyAgreement), (.int(4), .bytes(rules.authenticate(key: secret, newPinEnc))),
                               (.int(5), .bytes(newPinEnc))]).0
    }

    func changePIN(from current: String, to new: String) throws -> CTAPStatus {
        let (keyAgreement, secret) = try encapsulate()
        let pinHashEnc = try encrypt(secret, Self.pinHash(current))
        let newPinEnc = try encrypt(secret, Self.padded(Array(new.utf8)))
        return try send(0x04, [(.int(3), keyAgreement), (.int(4), .bytes(rules.authenticate(key: secret, newPinEnc + pinHashEnc))),
                               (.int(5), .bytes(newPinEnc)), (.int(6), .bytes(pinHashEnc))]).0
    }

    /// getPinToken (no `permissions`) or getPinUvAuthTokenUsingPinWithPermissions: the status and,
    /// on success, the decrypted token.
    func token(_ pin: String, permissions: Int? = nil, rpId: String? = nil) throws -> (CTAPStatus, [UInt8]?) {
        let (keyAgreement, secret) = try encapsulate()
        var members: [(CBORValue, CBORValue)] = [(.int(3), keyAgreement), (.int(6), .bytes(try encrypt(secret, Self.pinHash(pin))))]
        if let permissions { members.append((.int(9), .int(permissions))) }
        if let rpId { members.append((.int(10), .text(rpId))) }
        let (status, answer) = try send(permissions == nil ? 0x05 : 0x09, members)
        guard status == .ok else { return (status, nil) }
        guard let encrypted = answer?[.int(2)]?.bytesValue, let token = rules.decrypt(key: secret, encrypted) else { throw ClientFailure.badToken }
        return (status, token)
    }

    /// getPINRetries: the status, pinRetries and powerCycleState.
    func retries() throws -> (CTAPStatus, Int?, Bool?) {
        let (status, answer) = try send(0x01, [])
        return (status, answer?[.int(3)]?.intValue, answer?[.int(4)]?.boolValue)
    }

    /// What a command sends as pinUvAuthParam with `token` over `message`.
    func param(_ token: [UInt8], _ message: [UInt8]) -> [UInt8] { rules.authenticate(key: token, message) }

    func encrypt(_ secret: [UInt8], _ plaintext: [UInt8]) throws -> [UInt8] {
        guard let encrypted = rules.encrypt(key: secret, plaintext) else { throw ClientFailure.badKey }
        return encrypted
    }
}
