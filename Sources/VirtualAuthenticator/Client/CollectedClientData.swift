/// CollectedClientData (WebAuthn L3 §5.8.1) and its JSON-compatible serialization
/// (§5.8.1.2): members in the fixed order type, challenge, origin, crossOrigin[, topOrigin], so an
/// RP can verify it with a plain byte comparison as well as with a JSON parser. A native app's
/// platform API (Apple's AuthenticationServices) writes type, challenge and origin only.
package struct CollectedClientData: Equatable, Sendable {
    package enum CeremonyType: String, Sendable {
        case create = "webauthn.create"
        case get = "webauthn.get"
    }

    package var type: CeremonyType
    package var challenge: [UInt8]
    package var origin: String
    package var crossOrigin: Bool
    package var topOrigin: String?
    /// Written as a native app's platform API writes it: no crossOrigin (nor topOrigin).
    package var omitsCrossOrigin = false

    package init(type: CeremonyType, challenge: [UInt8], origin: String, crossOrigin: Bool = false, topOrigin: String? = nil) {
        self.type = type
        self.challenge = challenge
        self.origin = origin
        self.crossOrigin = crossOrigin
        self.topOrigin = topOrigin
    }

    package var json: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(96 + challenge.count * 4 / 3 + origin.utf8.count + (topOrigin?.utf8.count ?? 0))
        out += #"{"type":"#.utf8
        Self.appendCCDString(type.rawValue, to: &out)
        out += #","challenge":""#.utf8
        Base64URL.append(challenge, to: &out)  // nothing in base64url needs escaping
        out += #"","origin":"#.utf8
        Self.appendCCDString(origin, to: &out)
        if !omitsCrossOrigin { out += (crossOrigin ? #","crossOrigin":true"# : #","crossOrigin":false"#).utf8 }
        if crossOrigin, !omitsCrossOrigin, let topOrigin {
            out += #","topOrigin":"#.utf8
            Self.appendCCDString(topOrigin, to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    package var hash: [UInt8] { SHA256.hash(json) }

    /// CCDToString (§5.8.1.2): quote, escape `"` and `\`, and write control characters (and
    /// anything below U+0020) as `\u` with four lower-case hex digits. Byte by byte: every byte of
    /// a UTF-8 sequence beyond ASCII is 0x80 or more, so it is copied as the scalar would be.
    static func appendCCDString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in s.utf8 {
            switch byte {
            case 0x22: out += #"\""#.utf8
            case 0x5C: out += #"\\"#.utf8
            case 0x20...: out.append(byte)
            default: out += [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                             hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]]
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
