/// Authenticator data (WebAuthn L3 §6.1): rpIdHash (32) ‖ flags (1) ‖ signCount (4, big-endian)
/// ‖ attestedCredentialData (only with AT) ‖ extensions (only with ED).
public struct AuthenticatorData: Equatable, Sendable {
    public var rpIdHash: [UInt8]
    public var flags: AuthenticatorFlags
    public var signCount: UInt32
    public var attestedCredentialData: AttestedCredentialData?
    public var extensions: CBORValue?

    public init(
        rpId: String, flags: AuthenticatorFlags, signCount: UInt32,
        attestedCredentialData: AttestedCredentialData? = nil, extensions: CBORValue? = nil
    ) {
        self.rpIdHash = SHA256.hash(Array(rpId.utf8))
        self.flags = flags
        self.signCount = signCount
        self.attestedCredentialData = attestedCredentialData
        self.extensions = extensions
        // AT and ED describe what follows; they are derived, never set by hand.
        self.flags.set(.attestedCredentialData, attestedCredentialData != nil)
        self.flags.set(.extensionData, extensions != nil)
    }

    public var bytes: [UInt8] {
        var out = rpIdHash
        out.append(flags.rawValue)
        out += withUnsafeBytes(of: signCount.bigEndian, Array.init)
        if let attestedCredentialData { out += attestedCredentialData.bytes }
        if let extensions { out += extensions.encoded() }
        return out
    }

    public struct ParseError: Error, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// Parses authenticator data, checking every length and that nothing trails.
    public init(parsing data: [UInt8]) throws(ParseError) {
        guard data.count >= 37 else { throw ParseError(description: "authenticator data shorter than 37 bytes") }
        rpIdHash = Array(data[0..<32])
        flags = AuthenticatorFlags(rawValue: data[32])
        signCount = data[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        var rest = Array(data[37...])
        attestedCredentialData = nil
        extensions = nil
        if flags.contains(.attestedCredentialData) {
            let (acd, used) = try AttestedCredentialData.parsePrefix(rest)
            attestedCredentialData = acd
            rest.removeFirst(used)
        }
        if flags.contains(.extensionData) {
            guard let (ext, used) = try? CBORValue.decodePrefix(rest), used == rest.count else {
                throw ParseError(description: "malformed extensions CBOR")
            }
            extensions = ext
            rest = []
        }
        guard rest.isEmpty else { throw ParseError(description: "\(rest.count) trailing bytes in authenticator data") }
    }
}

/// The flags byte (WebAuthn L3 §6.1, "flags").
public struct AuthenticatorFlags: OptionSet, Equatable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let userPresent = AuthenticatorFlags(rawValue: 1 << 0)  // UP
    public static let userVerified = AuthenticatorFlags(rawValue: 1 << 2)  // UV
    public static let backupEligible = AuthenticatorFlags(rawValue: 1 << 3)  // BE
    public static let backupState = AuthenticatorFlags(rawValue: 1 << 4)  // BS
    public static let attestedCredentialData = AuthenticatorFlags(rawValue: 1 << 6)  // AT
    public static let extensionData = AuthenticatorFlags(rawValue: 1 << 7)  // ED

    public mutating func set(_ flag: AuthenticatorFlags, _ on: Bool) {
        if on { insert(flag) } else { remove(flag) }
    }
}

/// Attested credential data (WebAuthn L3 §6.5.2): aaguid (16) ‖ credentialIdLength (2, big-endian)
/// ‖ credentialId ‖ credentialPublicKey (COSE_Key, CTAP2 canonical CBOR).
public struct AttestedCredentialData: Equatable, Sendable {
    public var aaguid: [UInt8]
    public var credentialId: [UInt8]
    public var publicKey: COSEKey

    public init(aaguid: [UInt8], credentialId: [UInt8], publicKey: COSEKey) {
        precondition(aaguid.count == 16 && (1...1023).contains(credentialId.count))
        self.aaguid = aaguid
        self.credentialId = credentialId
        self.publicKey = publicKey
    }

    public var bytes: [UInt8] {
        aaguid + [UInt8(credentialId.count >> 8), UInt8(credentialId.count & 0xFF)] + credentialId
            + publicKey.cbor.encoded()
    }

    static func parsePrefix(_ data: [UInt8]) throws(AuthenticatorData.ParseError) -> (AttestedCredentialData, Int) {
        guard data.count >= 18 else { throw .init(description: "attested credential data truncated") }
        let idLength = Int(data[16]) << 8 | Int(data[17])
        guard (1...1023).contains(idLength), data.count >= 18 + idLength else {
            throw .init(description: "bad credential id length \(idLength)")
        }
        let id = Array(data[18..<18 + idLength])
        let keyBytes = Array(data[(18 + idLength)...])
        guard let (cbor, used) = try? CBORValue.decodePrefix(keyBytes), let key = COSEKey(cbor: cbor) else {
            throw .init(description: "credential public key is not an ES256 COSE_Key")
        }
        return (AttestedCredentialData(aaguid: Array(data[0..<16]), credentialId: id, publicKey: key), 18 + idLength + used)
    }
}
