/// CollectedClientData (WebAuthn L3 §5.8.1) and its JSON-compatible serialization
/// (§5.8.1.2): members in the fixed order type, challenge, origin, crossOrigin[, topOrigin], so an
/// RP can verify it with a plain byte comparison as well as with a JSON parser.
public struct CollectedClientData: Equatable, Sendable {
    public enum CeremonyType: String, Sendable {
        case create = "webauthn.create"
        case get = "webauthn.get"
    }

    public var type: CeremonyType
    public var challenge: [UInt8]
    public var origin: String
    public var crossOrigin: Bool
    public var topOrigin: String?

    public init(type: CeremonyType, challenge: [UInt8], origin: String, crossOrigin: Bool = false, topOrigin: String? = nil) {
        self.type = type
        self.challenge = challenge
        self.origin = origin
        self.crossOrigin = crossOrigin
        self.topOrigin = topOrigin
    }

    public var json: [UInt8] {
        var out = "{\"type\":" + Self.ccdString(type.rawValue)
        out += ",\"challenge\":" + Self.ccdString(Base64URL.encode(challenge))
        out += ",\"origin\":" + Self.ccdString(origin)
        out += ",\"crossOrigin\":" + (crossOrigin ? "true" : "false")
        if crossOrigin, let topOrigin { out += ",\"topOrigin\":" + Self.ccdString(topOrigin) }
        return Array((out + "}").utf8)
    }

    public var hash: [UInt8] { SHA256.hash(json) }

    /// CCDToString (§5.8.1.2): quote, escape `"` and `\`, and write control characters (and
    /// anything below U+0020) as `\u` with four lower-case hex digits.
    static func ccdString(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar.value {
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0x20...0x21, 0x23...0x5B, 0x5D...0x10FFFF: out.unicodeScalars.append(scalar)
            default:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
        }
        return out + "\""
    }
}
