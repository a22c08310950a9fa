import CTAP
import Session
import TestSupport

/// A security key on a throw-away account: one device named "key" of the security-key profile
/// (8 PIN retries), with no PIN, in a fresh directory.
final class KeyFixture {
    let directory: TemporaryDirectory?
    let session: Session
    let key: SecurityKey

    /// With `keeping` `.durable`, the vault is flushed at every commit and another ``Session``
    /// may open it after this one (``reopen()``).
    init(profile: String = "security-key", touch: Touch = Touch(), keeping: AccountSpec.Keeping = .throwAway(storeInMemory: true)) throws {
        let directory = try TemporaryDirectory("authctl-ctap")
        self.directory = directory
        session = try Session.create(AccountSpec(path: directory.path + "/vault", passphrase: Self.passphrase(), kdf: .min,
                                                 devices: [.securityKey(name: "key")], keeping: keeping))
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
