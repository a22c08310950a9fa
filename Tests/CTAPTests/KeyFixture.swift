import CTAP
import Session
import TestSupport

/// A security key on a throw-away account: one device named "key" of the security-key profile,
/// with no PIN, in a fresh directory.
final class KeyFixture {
    let directory: TemporaryDirectory
    let session: Session
    let key: SecurityKey

    init(profile: String = "security-key", touch: Touch = Touch()) throws {
        directory = try TemporaryDirectory("authctl-ctap")
        var passphrase = Array("p".utf8)
        session = try Session.create(AccountSpec(path: directory.path + "/vault", passphrase: SecureBytes(consuming: &passphrase), kdf: .min,
                                                 devices: [AccountSpec.DeviceSpec(name: "key", pin: nil)],
                                                 keeping: .throwAway(storeInMemory: true)))
        try session.setProfile(profile, device: "key")
        key = SecurityKey(session: session, device: "key", touch: touch)
    }

    /// The key's answer to `command` with `parameters` (a CBOR map), as a status and a value.
    func send(_ command: UInt8, _ parameters: CBORValue? = nil, progress: CTAPProgress = CTAPProgress()) throws -> (CTAPStatus, CBORValue?) {
        let answer = key.cbor([command] + (parameters?.encoded() ?? []), progress: progress)
        let status = CTAPStatus(rawValue: answer[0])
        return (status, answer.count > 1 ? try CBORValue.decode(Array(answer.dropFirst())) : nil)
    }
}
