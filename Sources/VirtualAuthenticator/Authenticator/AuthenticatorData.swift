@_spi(ByteOrder) import ByteOrder

/// Authenticator data (WebAuthn L3 §6.1): rpIdHash (32) ‖ flags (1) ‖ signCount (4, big-endian)
/// ‖ attestedCredentialData (only with AT) ‖ extensions (only with ED).
package struct AuthenticatorData: Equatable, Sendable {
    package var rpIdHash: [UInt8]
    package var flags: AuthenticatorFlags
    package var signCount: UInt32
    package var attestedCredentialData: AttestedCredentialData?
    package var extensions: CBORValue?

    package init(
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

    package var bytes: [UInt8] {
        var out = rpIdHash
        out.append(flags.rawValue)
        out += BigEndianBytes.of(signCount)
        if let attestedCredentialData { out += attestedCredentialData.bytes }
        if let extensions { out += extensions.encoded() }
        return out
    }

    package struct ParseError: Error, Equatable, CustomStringConvertible {
        package let description: String
    }

    /// Parses authenticator data, checking every length and that nothing trails.
    package init(parsing data: [UInt8]) throws(ParseError) {
        guard data.count >= 37 else { throw ParseError(description: "authenticator data shorter than 37 bytes") }
        rpIdHash = Array(data[0..<32])
        flags = AuthenticatorFlags(rawValue: data[32])
        signCount = BigEndianBytes.integer(data[33..<37])
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
