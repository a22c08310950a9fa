/// The members every PublicKeyCredential's JSON has (WebAuthn L3 §5.1, `toJSON()`), around the
/// ceremony's own `response`.
struct PublicKeyCredentialJSON<Response: Encodable>: Encodable {
    let id: String
    let rawId: String
    let type = "public-key"
    let authenticatorAttachment: String
    let response: Response
    let clientExtensionResults: ClientExtensionResults

    init(credentialId: [UInt8], attachment: AuthenticatorAttachment, response: Response,
         clientExtensionResults: ClientExtensionResults) {
        id = Base64URL.encode(credentialId)
        rawId = id
        authenticatorAttachment = attachment.rawValue
        self.response = response
        self.clientExtensionResults = clientExtensionResults
    }
}

extension PublicKeyCredentialJSON {
    /// A value of the `response` member, as ``fastJSON(credentialId:attachment:response:clientExtensionResults:)`` writes it.
    enum FastValue {
        /// Bytes, as a base64url string.
        case base64URL([UInt8])
        case integer(Int)
        /// Strings that need no escaping (fixed names), as an array.
        case plainStrings([String])
    }

    /// The same JSON ``JSONOutput`` writes for a credential, built directly: members in sorted
    /// order, no escaping needed. Every value here is base64url, a COSE number or one of the
    /// fixed names (attachment, transports), so none has a character JSON escapes; the extension
    /// results, which can hold anything, still go through the encoder unless empty. A unit test
    /// holds the two to the same bytes.
    static func fastJSON(credentialId: [UInt8], attachment: AuthenticatorAttachment, response members: [(name: StaticString, value: FastValue)],
                         clientExtensionResults: ClientExtensionResults) -> String {
        var out = [UInt8]()
        out.reserveCapacity(256 + credentialId.count * 8 / 3 + members.reduce(0) { total, member in
            if case .base64URL(let bytes) = member.value { return total + bytes.count * 4 / 3 + 24 }
            return total + 64
        })
        out += #"{"authenticatorAttachment":""#.utf8
        out += attachment.rawValue.utf8
        out += #"","clientExtensionResults":"#.utf8
        if clientExtensionResults == ClientExtensionResults() {
            out += "{}".utf8
        } else {
            out += JSONOutput.string(clientExtensionResults).utf8
        }
        out += #","id":""#.utf8
        Base64URL.append(credentialId, to: &out)
        out += #"","rawId":""#.utf8
        Base64URL.append(credentialId, to: &out)
        out += #"","response":{"#.utf8
        for (index, member) in members.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: UnsafeBufferPointer(start: member.name.utf8Start, count: member.name.utf8CodeUnitCount))
            out += #"":"#.utf8
            switch member.value {
            case .base64URL(let bytes):
                out.append(UInt8(ascii: "\""))
                Base64URL.append(bytes, to: &out)
                out.append(UInt8(ascii: "\""))
            case .integer(let value):
                out += String(value).utf8
            case .plainStrings(let strings):
                out.append(UInt8(ascii: "["))
                for (i, string) in strings.enumerated() {
                    if i > 0 { out.append(UInt8(ascii: ",")) }
                    out.append(UInt8(ascii: "\""))
                    out += string.utf8
                    out.append(UInt8(ascii: "\""))
                }
                out.append(UInt8(ascii: "]"))
            }
        }
        out += #"},"type":"public-key"}"#.utf8
        return String(decoding: out, as: UTF8.self)
    }
}
