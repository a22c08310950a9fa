import Keychain
import VirtualAuthenticator

/// The options a front end builds when it is given none (`register` and `sign` without
/// `--options`, a scenario's ceremony without `options`): one builder per ceremony, so the
/// command line and a scenario write the same JSON for the same inputs. A binary value left `nil`
/// is drawn from the session's ``BuiltOptionsRandomness`` when the request runs — never from the
/// account's seeded stream, which only what writes draws from.
public struct CreationOptionsBuilder: Sendable, Equatable {
    public var rpId: String?
    public var rpName: String
    public var userId: [UInt8]?
    public var userName: String
    public var displayName: String?
    public var challenge: [UInt8]?
    /// COSE algorithm numbers for `pubKeyCredParams`, in order.
    public var algorithms: [Int]
    public var attestation: String
    public var userVerification: String
    public var exclude: [[UInt8]]
    public var timeout: Int?
    /// `extensions: {credProps: true}`, as a page that wants to know whether a passkey is
    /// discoverable asks.
    public var credProps: Bool

    public init(rpId: String? = nil, rpName: String? = nil, userId: [UInt8]? = nil, userName: String = "user",
                displayName: String? = nil, challenge: [UInt8]? = nil,
                algorithms: [Int] = [COSEAlgorithm.es256.rawValue, COSEAlgorithm.rs256.rawValue],
                attestation: String = "none", userVerification: String = "preferred", exclude: [[UInt8]] = [],
                timeout: Int? = nil, credProps: Bool = true) {
        self.rpId = rpId
        self.rpName = rpName ?? rpId ?? "authctl"
        self.userId = userId
        self.userName = userName
        self.displayName = displayName
        self.challenge = challenge
        self.algorithms = algorithms
        self.attestation = attestation
        self.userVerification = userVerification
        self.exclude = exclude
        self.timeout = timeout
        self.credProps = credProps
    }

    /// PublicKeyCredentialCreationOptionsJSON: a user id of 16 random bytes and a challenge of 32
    /// where none was given, drawn in that order.
    public func json(drawing draw: (_ count: Int) -> [UInt8]) -> [UInt8] {
        let id = userId ?? draw(16)
        let options = Document(
            rp: .init(id: rpId, name: rpName),
            user: .init(id: Base64URL.encode(id), name: userName, displayName: displayName ?? userName),
            challenge: Base64URL.encode(challenge ?? draw(32)),
            pubKeyCredParams: algorithms.map { .init(alg: $0) }, attestation: attestation,
            authenticatorSelection: .init(userVerification: userVerification),
            excludeCredentials: exclude.map { Descriptor(id: Base64URL.encode($0)) }, timeout: timeout,
            extensions: credProps ? .init() : nil)
        return Array(JSONOutput.string(options).utf8)
    }

    struct Document: Encodable {
        struct RP: Encodable { let id: String?; let name: String }
        struct User: Encodable { let id: String; let name: String; let displayName: String }
        struct Parameter: Encodable { var type = "public-key"; let alg: Int }
        struct Selection: Encodable { var residentKey = "required"; let userVerification: String }
        struct Extensions: Encodable { var credProps = true }

        let rp: RP
        let user: User
        let challenge: String
        let pubKeyCredParams: [Parameter]
        let attestation: String
        let authenticatorSelection: Selection
        let excludeCredentials: [Descriptor]
        let timeout: Int?
        let extensions: Extensions?
    }
}

/// PublicKeyCredentialRequestOptionsJSON a front end builds when it is given none.
public struct RequestOptionsBuilder: Sendable, Equatable {
    public var rpId: String?
    public var challenge: [UInt8]?
    public var userVerification: String
    public var allow: [[UInt8]]
    public var timeout: Int?

    public init(rpId: String? = nil, challenge: [UInt8]? = nil, userVerification: String = "preferred", allow: [[UInt8]] = [],
                timeout: Int? = nil) {
        self.rpId = rpId
        self.challenge = challenge
        self.userVerification = userVerification
        self.allow = allow
        self.timeout = timeout
    }

    /// The options JSON; a challenge of 32 random bytes where none was given.
    public func json(drawing draw: (_ count: Int) -> [UInt8]) -> [UInt8] {
        let options = Document(rpId: rpId, challenge: Base64URL.encode(challenge ?? draw(32)),
                               userVerification: userVerification,
                               allowCredentials: allow.map { Descriptor(id: Base64URL.encode($0)) }, timeout: timeout)
        return Array(JSONOutput.string(options).utf8)
    }

    struct Document: Encodable {
        let rpId: String?
        let challenge: String
        let userVerification: String
        let allowCredentials: [Descriptor]
        let timeout: Int?
    }
}

/// PublicKeyCredentialDescriptorJSON, for built options.
struct Descriptor: Encodable {
    var type = "public-key"
    let id: String
}

/// Where the random parts of built options (a challenge, a user id) come from: the system's
/// randomness, or — for a run that must repeat byte for byte — the n-th block of a stream of their
/// own, SHA-256("AUTHCTL-CHALLENGE" ‖ seed ‖ n), so that drawing them moves no credential id, delay
/// or sync time of the account's seeded stream.
public enum BuiltOptionsRandomness: Sendable, Equatable {
    case live
    case seeded(UInt64)
}

/// Options given whole (a file, a reply, inline JSON), or built from a front end's inputs.
public enum OptionsSource<Builder: Sendable & Equatable>: Sendable, Equatable {
    case json([UInt8])
    case built(Builder)
}
