import CTAP
import Foundation
import Session
import VirtualAuthenticator

/// A client's session with a security key's CTAP2 command layer (`SecurityKey.cbor`): the input
/// is steps, each a command the fuzzer wrote byte for byte, or one it wrote whose
/// pinUvAuthParam the client fills in with its token (a MAC the fuzzer cannot forge), or the
/// client getting a token with the PIN, trying a wrong PIN, or cutting the power. The key is a
/// throw-away device of the security-key profile whose vault lives on /dev/shm (else $TMPDIR),
/// made once per process; each input starts it from a reset (and, by its first byte, a PIN), so
/// an input answers the same every time. What must hold of every answer: it is not empty, its
/// first byte is a status CTAP 2.1 defines, and a CTAP2_OK answer's body is canonical CBOR.
enum CTAPKeySession {
    static let pin = "1234"

    /// The key, and where its vault is (removed when the process ends).
    nonisolated(unsafe) static var directory = ""
    static let key: SecurityKey = {
        let base = FileManager.default.isWritableFile(atPath: "/dev/shm") ? "/dev/shm"
            : ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((base + "/authctl-fuzz-key-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { fatalError("cannot make a directory in \(base)") }
        directory = String(cString: made)
        atexit { try? FileManager.default.removeItem(atPath: CTAPKeySession.directory) }
        var passphrase = Array("fuzz".utf8)
        do {
            let session = try Session.create(AccountSpec(path: directory + "/vault", passphrase: SecureBytes(consuming: &passphrase), kdf: .min,
                                                         devices: [.securityKey()], keeping: .throwAway(storeInMemory: true)))
            try session.setProfile("security-key", device: "key")
            return SecurityKey(session: session, device: "key", touch: Touch(policy: .always))
        } catch {
            fatalError("cannot make the key: \(error)")
        }
    }()

    /// AUTHCTL_FUZZ_TRACE set: each request and its answer's status printed (to read a finding).
    static let trace = ProcessInfo.processInfo.environment["AUTHCTL_FUZZ_TRACE"] != nil

    /// The commands an authenticated step sends, by the step's bits 3–7 (mod 5).
    static let authenticated: [UInt8] = [0x01, 0x02, 0x0A, 0x0C, 0x0D]

    /// The client's side: its current token and the protocol that gave it.
    struct Client {
        var token: [UInt8]?
        var version = PinUvAuthProtocol.Version.two
    }

    static func run(_ input: [UInt8]) {
        guard let flags = input.first else { return }
        // Each input from a fresh key: power, a reset (in the 10 s after power-up), a PIN if asked.
        key.powerCycled()
        precondition(send([0x07]).first == 0, "the harness's reset failed")
        var client = Client()
        if flags & 1 == 1 { precondition(setPIN(pin, .two) == 0, "the harness's setPIN failed") }
        var rest = input.dropFirst()
        while let step = rest.first {
            rest = rest.dropFirst()
            switch step & 7 {
            case 1:
                let command = authenticated[Int(step >> 3) % authenticated.count]
                let body = Array(take(&rest))
                _ = send([command] + authenticate(command, body, client))
            case 2:
                client.version = step & 0x08 == 0 ? .one : .two
                let permissions = Int(rest.first ?? 0) & 0x3F
                rest = rest.dropFirst()
                client.token = token(pin, client.version, permissions: permissions == 0 ? nil : permissions,
                                     rpId: step & 0x80 == 0 ? nil : "example.com")
            case 3:
                key.powerCycled()
                client.token = nil
            case 4:
                _ = token("0000", step & 0x08 == 0 ? .one : .two, permissions: nil, rpId: nil)
            default:
                _ = send(Array(take(&rest)))
            }
        }
    }

    /// The steps, as ``run(_:)`` reads them (for seeds): low three bits the kind.
    enum Step {
        /// A request as it is: the command byte and its parameters.
        case raw([UInt8])
        /// One of ``authenticated`` (by index) with these parameters, the client's token's MAC added.
        case authenticated(Int, CBORValue)
        /// A token with these permissions (0: getPinToken), protocol two, bound to example.com or not.
        case token(UInt8, boundToExampleCom: Bool)
        case powerCycle
        case wrongPIN

        var bytes: [UInt8] {
            func sized(_ bytes: [UInt8]) -> [UInt8] { [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes }
            switch self {
            case .raw(let request): return [0] + sized(request)
            case .authenticated(let index, let parameters): return [1 | UInt8(index) << 3] + sized(parameters.encoded())
            case .token(let permissions, let bound): return [2 | 0x08 | (bound ? 0x80 : 0), permissions]
            case .powerCycle: return [3]
            case .wrongPIN: return [4 | 0x08]
            }
        }
    }

    /// A step's bytes: a two-byte big-endian length, then up to that many bytes (at most the
    /// key's maxMsgSize).
    static func take(_ rest: inout ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let length = rest.prefix(2).reduce(0) { $0 << 8 | Int($1) } % (key.maxMessageSize + 1)
        rest = rest.dropFirst(2)
        let bytes = rest.prefix(length)
        rest = rest.dropFirst(bytes.count)
        return bytes
    }

    /// The key's answer to `request`, checked.
    static func send(_ request: [UInt8]) -> [UInt8] {
        let answer = key.cbor(request, progress: CTAPProgress())
        if trace { print("\(String(format: "%02x", request.first ?? 0)) \(request.count) → \(CTAPStatus(rawValue: answer.first ?? 0)) \(answer.count)") }
        check(answer)
        return answer
    }

    static func check(_ answer: [UInt8]) {
        guard let status = answer.first else { preconditionFailure("an empty answer") }
        precondition(!CTAPStatus(rawValue: status).description.hasPrefix("CTAP status"), "a status CTAP 2.1 does not define: \(status)")
        precondition(status == 0 || answer.count == 1, "an error status with a body")
        if status == 0 && answer.count > 1 {
            let body = Array(answer.dropFirst())
            guard let value = try? CBORValue.decode(body) else { preconditionFailure("a CTAP2_OK body that does not decode") }
            precondition(value.encoded() == body, "a CTAP2_OK body that is not canonical CBOR")
        }
    }

    /// `body` (the fuzzer's parameters) with the client's pinUvAuthProtocol and pinUvAuthParam,
    /// over what `command` authenticates (CTAP 2.1 §6.1.2, §6.2.2, §6.8, §6.10.2, §6.11); as it
    /// came when it is not a map of integer keys or the client has no token.
    static func authenticate(_ command: UInt8, _ body: [UInt8], _ client: Client) -> [UInt8] {
        guard let token = client.token, let rules = try? PinUvAuthProtocol(client.version),
              case .map(let pairs)? = try? CBORValue.decode(body) else { return body }
        var members = [Int: CBORValue]()
        for (name, value) in pairs {
            guard let number = name.intValue else { return body }
            members[number] = value
        }
        let paramKey: Int, versionKey: Int, message: [UInt8]
        switch command {
        case 0x01:
            (paramKey, versionKey) = (0x08, 0x09)
            message = members[0x01]?.bytesValue ?? []
        case 0x02:
            (paramKey, versionKey) = (0x06, 0x07)
            message = members[0x02]?.bytesValue ?? []
        case 0x0A:
            (paramKey, versionKey) = (0x04, 0x03)
            message = [UInt8(truncatingIfNeeded: members[0x01]?.intValue ?? 0)] + (members[0x02]?.encoded() ?? [])
        case 0x0C:
            (paramKey, versionKey) = (0x05, 0x06)
            let offset = members[0x03]?.intValue ?? 0
            message = [UInt8](repeating: 0xFF, count: 32) + [0x0C, 0x00] + (0..<4).map { UInt8(truncatingIfNeeded: offset >> (8 * $0)) }
                + SHA256.hash(members[0x02]?.bytesValue ?? [])
        default:
            (paramKey, versionKey) = (0x04, 0x03)
            message = [UInt8](repeating: 0xFF, count: 32) + [0x0D, UInt8(truncatingIfNeeded: members[0x01]?.intValue ?? 0)]
                + (members[0x02]?.encoded() ?? [])
        }
        members[paramKey] = .bytes(rules.authenticate(key: token, message))
        members[versionKey] = .int(client.version.rawValue)
        return CBORValue.map(members.keys.sorted().map { (.int($0), members[$0]!) }).encoded()
    }

    // MARK: - The client's side of authenticatorClientPIN

    /// getKeyAgreement and encapsulate: the platform's key and the shared secret.
    static func encapsulate(_ version: PinUvAuthProtocol.Version) -> (CBORValue, [UInt8])? {
        let answer = send([0x06] + CBORValue.map([(.int(1), .int(version.rawValue)), (.int(2), .int(2))]).encoded())
        guard answer.first == 0, let value = try? CBORValue.decode(Array(answer.dropFirst())), let peer = value[.int(1)],
              let result = try? PinUvAuthProtocol.encapsulate(version, peerCoseKey: peer) else { return nil }
        return (result.keyAgreement, result.sharedSecret)
    }

    static func setPIN(_ pin: String, _ version: PinUvAuthProtocol.Version) -> UInt8? {
        guard let rules = try? PinUvAuthProtocol(version), let (keyAgreement, secret) = encapsulate(version) else { return nil }
        let padded = Array(pin.utf8) + [UInt8](repeating: 0, count: 64 - pin.utf8.count)
        guard let newPinEnc = rules.encrypt(key: secret, padded) else { return nil }
        return send([0x06] + CBORValue.map([(.int(1), .int(version.rawValue)), (.int(2), .int(3)), (.int(3), keyAgreement),
                                            (.int(4), .bytes(rules.authenticate(key: secret, newPinEnc))), (.int(5), .bytes(newPinEnc))]).encoded()).first
    }

    /// getPinToken (no `permissions`) or getPinUvAuthTokenUsingPinWithPermissions: the token, or
    /// `nil` when the key refused.
    static func token(_ pin: String, _ version: PinUvAuthProtocol.Version, permissions: Int?, rpId: String?) -> [UInt8]? {
        guard let rules = try? PinUvAuthProtocol(version), let (keyAgreement, secret) = encapsulate(version),
              let pinHashEnc = rules.encrypt(key: secret, Array(SHA256.hash(Array(pin.utf8)).prefix(16))) else { return nil }
        var members: [(CBORValue, CBORValue)] = [(.int(1), .int(version.rawValue)), (.int(2), .int(permissions == nil ? 5 : 9)),
                                                 (.int(3), keyAgreement), (.int(6), .bytes(pinHashEnc))]
        if let permissions { members.append((.int(9), .int(permissions))) }
        if let rpId { members.append((.int(10), .text(rpId))) }
        let answer = send([0x06] + CBORValue.map(members).encoded())
        guard answer.first == 0, let value = try? CBORValue.decode(Array(answer.dropFirst())),
              let encrypted = value[.int(2)]?.bytesValue else { return nil }
        return rules.decrypt(key: secret, encrypted)
    }
}
