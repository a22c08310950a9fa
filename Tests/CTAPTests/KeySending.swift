import CTAP
import Session

/// What sends a key CBOR commands as a client does: the throw-away ``KeyFixture``, or a
/// ``VaultKey`` whose vault outlives it.
protocol KeySending {
    var key: SecurityKey { get }
}

extension KeySending {
    /// The key's answer to `command` with `parameters` (a CBOR map), as a status and a value.
    func send(_ command: UInt8, _ parameters: CBORValue? = nil, progress: CTAPProgress = CTAPProgress()) throws -> (CTAPStatus, CBORValue?) {
        let answer = key.cbor([command] + (parameters?.encoded() ?? []), progress: progress)
        let status = CTAPStatus(rawValue: answer[0])
        return (status, answer.count > 1 ? try CBORValue.decode(Array(answer.dropFirst())) : nil)
    }
}

extension KeyFixture: KeySending {}

/// A security key on a vault that stays on disk (kept `durable`, passphrase `p`), as `authctl
/// ctap serve --vault` serves one: made afresh with one device "key" of profile security-key, or
/// opened again after an earlier key on it is gone.
final class VaultKey: KeySending {
    let session: Session
    let key: SecurityKey

    init(creating path: String) throws {
        var passphrase = Array("p".utf8)
        session = try Session.create(AccountSpec(path: path, passphrase: SecureBytes(consuming: &passphrase), kdf: .min,
                                                 devices: [AccountSpec.DeviceSpec(name: "key", pin: nil, profile: "security-key")]))
        key = SecurityKey(session: session, device: "key")
    }

    init(opening path: String) throws {
        var passphrase = Array("p".utf8)
        session = try Session.open(at: path, passphrase: SecureBytes(consuming: &passphrase))
        key = SecurityKey(session: session, device: "key")
    }
}

extension CeremonyTests {
    /// The credential id and the extension outputs (`nil`: no ED flag) of a registration's
    /// authenticator data.
    static func attestedExtensions(_ authenticatorData: [UInt8]) throws -> (id: [UInt8], extensions: CBORValue?) {
        let length = Int(authenticatorData[53]) << 8 | Int(authenticatorData[54])
        let id = Array(authenticatorData[55..<55 + length])
        let (_, used) = try CBORValue.decodePrefix(Array(authenticatorData[(55 + length)...]))
        guard authenticatorData[32] & 0x80 != 0 else { return (id, nil) }
        return (id, try CBORValue.decode(Array(authenticatorData[(55 + length + used)...])))
    }
}
