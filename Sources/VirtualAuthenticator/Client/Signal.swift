/// What an RP tells the credential manager through the signal methods (WebAuthn L3 §5.1.10): one
/// of the three options dictionaries, read from the JSON an RP passes to the browser and checked
/// as the client's algorithm checks it — ids base64url (else TypeError, `badInput`), the RP ID
/// the origin's host or a registrable suffix of it (else SecurityError, `securityError`).
public enum Signal: Sendable, Equatable {
    /// `PublicKeyCredential.signalUnknownCredential({rpId, credentialId})` (§5.1.10.1).
    case unknownCredential(rpId: String, credentialId: [UInt8])
    /// `signalAllAcceptedCredentials({rpId, userId, allAcceptedCredentialIds})` (§5.1.10.2).
    case allAcceptedCredentials(rpId: String, userId: [UInt8], accepted: [[UInt8]])
    /// `signalCurrentUserDetails({rpId, userId, name, displayName})` (§5.1.10.3).
    case currentUserDetails(rpId: String, userId: [UInt8], name: String, displayName: String)

    /// The signal methods, by the name the command line gives them.
    public enum Kind: String, CaseIterable, Sendable {
        case unknownCredential = "unknown-credential"
        case allAcceptedCredentials = "accepted-credentials"
        case currentUserDetails = "current-user-details"

        /// The method a page calls.
        public var method: String {
            switch self {
            case .unknownCredential: "signalUnknownCredential"
            case .allAcceptedCredentials: "signalAllAcceptedCredentials"
            case .currentUserDetails: "signalCurrentUserDetails"
            }
        }
    }

    public var kind: Kind {
        switch self {
        case .unknownCredential: .unknownCredential
        case .allAcceptedCredentials: .allAcceptedCredentials
        case .currentUserDetails: .currentUserDetails
        }
    }

    /// The RP ID, in the ASCII form passkeys record.
    public var rpId: String {
        switch self {
        case .unknownCredential(let rpId, _), .allAcceptedCredentials(let rpId, _, _), .currentUserDetails(let rpId, _, _, _): rpId
        }
    }

    /// A base64url member that did not decode: for the signal methods that is a TypeError (§5.1.10),
    /// not the EncodingError of the ceremonies' JSON parsing.
    private static func finish(_ o: JSONReader) throws(AuthenticatorError) {
        do { try o.finish() } catch {
            throw AuthenticatorError(.badInput, error.message.replacingOccurrences(of: "(EncodingError)", with: "(TypeError)"))
        }
    }

    /// Reads `json` as the options of `kind` and validates it for a page at `origin`: the
    /// base64url members first (TypeError), then the RP ID (SecurityError), in the order of the
    /// spec's steps.
    public init(_ kind: Kind, json: [UInt8], origin originText: String, relatedOrigins: RelatedOrigins.Source? = nil,
                suffixes: @autoclosure () -> PublicSuffixList = .system) throws(AuthenticatorError) {
        let o = try JSONReader(parsing: json, path: "options")
        let rpIdText = try o.string("rpId")
        switch kind {
        case .unknownCredential:
            let credentialId = try o.bytes("credentialId")
            try Self.finish(o)
            self = .unknownCredential(rpId: try Self.validate(rpIdText, originText, relatedOrigins, suffixes()), credentialId: credentialId)
        case .allAcceptedCredentials:
            let userId = try o.bytes("userId")
            guard o.has("allAcceptedCredentialIds") else {
                throw AuthenticatorError(.badInput, "options.allAcceptedCredentialIds is missing (a required member)")
            }
            let ids = try o.strings("allAcceptedCredentialIds")
            var accepted = [[UInt8]]()
            for (i, text) in ids.enumerated() {
                guard let id = Base64URL.decodeStrict(text) else {
                    throw AuthenticatorError(.badInput, "options.allAcceptedCredentialIds[\(i)]: expected base64url")
                }
                accepted.append(id)
            }
            try Self.finish(o)
            self = .allAcceptedCredentials(rpId: try Self.validate(rpIdText, originText, relatedOrigins, suffixes()), userId: userId, accepted: accepted)
        case .currentUserDetails:
            let userId = try o.bytes("userId")
            let name = try o.string("name"), displayName = try o.string("displayName")
            try Self.finish(o)
            self = .currentUserDetails(rpId: try Self.validate(rpIdText, originText, relatedOrigins, suffixes()), userId: userId, name: name,
                                       displayName: displayName)
        }
    }

    /// §5.1.10 "Asynchronous RP ID validation", as a ceremony's RP ID is checked: the origin a
    /// secure context with a domain host, the RP ID that host or a registrable suffix of it.
    private static func validate(_ rpId: String, _ originText: String, _ related: RelatedOrigins.Source?,
                                 _ suffixes: PublicSuffixList) throws(AuthenticatorError) -> String {
        let origin = try Origin(parsing: originText)
        return try RelatedOrigins.validate(rpId, for: origin, source: related, suffixes: suffixes)
    }
}
