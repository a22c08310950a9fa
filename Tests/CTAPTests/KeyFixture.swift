import CTAP
import Session
import TestSupport

/// A security key on a throw-away account: one device named "key" of the security-key profile
/// (8 PIN retries), with no PIN, in a fresh directory.
final class KeyFixture {
    let directory: TemporaryDirectory?
    let session: Session
    let key: SecurityKey

    /// With `phone`, the account's first device is a phone (PIN 1111) whose passkeys sync.
    init(profile: String = "security-key", touch: Touch = Touch(), phone: Bool = false) throws {
        let directory = try TemporaryDirectory("authctl-ctap")
        self.directory = directory
        var pin = Array("1111".utf8)
        let phoneDevice = phone ? [AccountSpec.DeviceSpec(name: "phone", pin: SecureBytes(consuming: &pin))] : []
        session = try Session.create(AccountSpec(path: directory.path + "/vault", passphrase: Self.passphrase(), kdf: .min,
                                                 devices: phoneDevice + [.securityKey(name: "key")],
                                                 keeping: .throwAway(storeInMemory: true)),
                                     people: KnownPeople(pins: ["phone": "1111"], timeouts: .atOnce))
        try session.setProfile(profile, device: "key")
        key = SecurityKey(session: session, device: "key", touch: touch)
    }

    /// `key` on `session`, an account made elsewhere.
    init(session: Session, key: SecurityKey) {
        directory = nil
        self.session = session
        self.key = key
    }

    static func passphrase() -> SecureBytes {
        var bytes = Array("p".utf8)
        return SecureBytes(consuming: &bytes)
    }

    /// The key's answer to `command` with `parameters` (a CBOR map), as a status and a value.
    func send(_ command: UInt8, _ parameters: CBORValue? = nil, progress: CTAPProgress = CTAPProgress()) throws -> (CTAPStatus, CBORValue?) {
        let answer = key.cbor([command] + (parameters?.encoded() ?? []), progress: progress)
        let status = CTAPStatus(rawValue: answer[0])
        return (status, answer.count > 1 ? try CBORValue.decode(Array(answer.dropFirst())) : nil)
    }
}
