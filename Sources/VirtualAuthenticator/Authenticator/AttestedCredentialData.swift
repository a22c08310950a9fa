@_spi(ByteOrder) import ByteOrder

/// Attested credential data (WebAuthn L3 §6.5.2): aaguid (16) ‖ credentialIdLength (2, big-endian)
/// ‖ credentialId ‖ credentialPublicKey (COSE_Key, CTAP2 canonical CBOR).
package struct AttestedCredentialData: Equatable, Sendable {
    package var aaguid: [UInt8]
    package var credentialId: [UInt8]
    package var publicKey: COSEKey

    package init(aaguid: [UInt8], credentialId: [UInt8], publicKey: COSEKey) {
        precondition(aaguid.count == 16 && (1...1023).contains(credentialId.count))
        self.aaguid = aaguid
        self.credentialId = credentialId
        self.publicKey = publicKey
    }

    package var bytes: [UInt8] {
        aaguid + BigEndianBytes.of(UInt16(credentialId.count)) + credentialId
            + publicKey.cbor.encoded()
    }

    static func parsePrefix(_ data: [UInt8]) throws(AuthenticatorData.ParseError) -> (AttestedCredentialData, Int) {
        guard data.count >= 18 else { throw .init(description: "attested credential data truncated") }
        let idLength = Int(BigEndianBytes.integer(data[16..<18]) as UInt16)
        guard (1...1023).contains(idLength), data.count >= 18 + idLength else {
            throw .init(description: "bad credential id length \(idLength)")
        }
        let id = Array(data[18..<18 + idLength])
        let keyBytes = Array(data[(18 + idLength)...])
        guard let (cbor, used) = try? CBORValue.decodePrefix(keyBytes), let key = COSEKey(cbor: cbor) else {
            throw .init(description: "credential public key is not an ES256, EdDSA or RS256 COSE_Key")
        }
        return (AttestedCredentialData(aaguid: Array(data[0..<16]), credentialId: id, publicKey: key), 18 + idLength + used)
    }
}
