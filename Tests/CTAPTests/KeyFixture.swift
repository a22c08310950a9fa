import CTAP
import Session
import TestSupport

/// A security key on a throw-away account: one device named "key" of the security-key profile,
/// with no PIN, in a fresh directory.
final class KeyFixture {
    let directory: TemporaryDirectory
    let session: Session
    let key: SecurityKey

    /// With `phone`, the account's first device is a phone (PIN 1111) whose passkeys sync.
    init(profile: String = "security-key", touch: Touch = Touch(), phone: Bool = false) throws {
        directory = try TemporaryDirectory("authctl-ctap")
        var passphrase = Array("p".utf8), pin = Array("1111".utf8)
        let phoneDevice = phone ? [AccountSpec.DeviceSpec(name: "phone", pin: SecureBytes(consuming: &pin))] : []
        session = try Session.create(AccountSpec(path: directory.path + "/vault", passphrase: SecureBytes(consuming: &passphrase), kdf: .min,
                                                 devices: phoneDevice + [AccountSpec.DeviceSpec(name: "key", pin: nil)],
                                                 keeping: .throwAway(storeInMemory: true)),
                                     people: KnownPeople(pins: ["phone": "1111"], timeouts: .atOnce))
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
