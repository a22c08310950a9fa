import Testing
@testable import VirtualAuthenticator

private let knownX = (UInt8(0x01)...0x20).map { $0 }
private let knownY = (UInt8(0x21)...0x40).map { $0 }
private let knownKey = COSEKey.ec2(x: knownX, y: knownY)
private let aaguid = (UInt8(0xA0)...0xAF).map { $0 }

private func attested(idLength: Int = 20) -> AttestedCredentialData {
    AttestedCredentialData(aaguid: aaguid, credentialId: [UInt8](repeating: 0xC1, count: idLength), publicKey: knownKey)
}

private func authData(
    flags: AuthenticatorFlags = [.userPresent], signCount: UInt32 = 0,
    attested: AttestedCredentialData? = attested(), extensions: CBORValue? = nil
) -> AuthenticatorData {
    AuthenticatorData(rpId: "example.com", flags: flags, signCount: signCount,
                      attestedCredentialData: attested, extensions: extensions)
}

private func expectParseFails(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(throws: AuthenticatorData.ParseError.self, sourceLocation: sourceLocation) {
        try AuthenticatorData(parsing: bytes)
    }
}

/// Authenticator data with AT whose credential id length field (bytes 53–54) says `length`.
private func withCredentialIdLength(_ length: UInt16) -> [UInt8] {
    var bytes = authData().bytes
    bytes[53] = UInt8(length >> 8)
    bytes[54] = UInt8(length & 0xFF)
    return bytes
}

// MARK: - Layout

@Test func flagBitsHaveTheirWebAuthnValues() {
    #expect(AuthenticatorFlags.userPresent.rawValue == 0x01)
    #expect(AuthenticatorFlags.userVerified.rawValue == 0x04)
    #expect(AuthenticatorFlags.backupEligible.rawValue == 0x08)
    #expect(AuthenticatorFlags.backupState.rawValue == 0x10)
    #expect(AuthenticatorFlags.attestedCredentialData.rawValue == 0x40)
    #expect(AuthenticatorFlags.extensionData.rawValue == 0x80)
}

@Test func bytesAreLaidOutAsWebAuthnSection6_1() {
    let data = authData(flags: [.userPresent, .userVerified, .backupEligible, .backupState], signCount: 0x0102_0304)
    let bytes = data.bytes
    let coseKey = knownKey.cbor.encoded()
    #expect(bytes.count == 32 + 1 + 4 + 16 + 2 + 20 + coseKey.count)
    #expect(Array(bytes[0..<32]) == hexBytes("a379a6f6eeafb9a55e378c118034e2751e682fab9f2d30ab13d2125586ce1947"))
    #expect(Array(bytes[0..<32]) == SHA256.hash(Array("example.com".utf8)))
    #expect(bytes[32] == 0x01 | 0x04 | 0x08 | 0x10 | 0x40)
    #expect(Array(bytes[33..<37]) == [0x01, 0x02, 0x03, 0x04])
    #expect(Array(bytes[37..<53]) == aaguid)
    #expect(Array(bytes[53..<55]) == [0x00, 20])
    #expect(Array(bytes[55..<75]) == [UInt8](repeating: 0xC1, count: 20))
    #expect(Array(bytes[75...]) == coseKey)
}

@Test func credentialIdLengthIsTwoBytesBigEndian() {
    let bytes = authData(attested: attested(idLength: 300)).bytes
    #expect(Array(bytes[53..<55]) == [0x01, 0x2C])
}

@Test func withoutAttestedDataTheBytesEndAfterTheSignCount() {
    let bytes = authData(flags: [.userPresent], signCount: 0xFFFF_FFFE, attested: nil).bytes
    #expect(bytes.count == 37)
    #expect(bytes[32] == 0x01)
    #expect(Array(bytes[33..<37]) == [0xFF, 0xFF, 0xFF, 0xFE])
}

@Test func attestedDataFlagIsSetExactlyWhenAttestedDataIsPresent() {
    #expect(authData(flags: [.userPresent], attested: attested()).flags.contains(.attestedCredentialData))
    let forgedAT = authData(flags: [.userPresent, .attestedCredentialData], attested: nil)
    #expect(!forgedAT.flags.contains(.attestedCredentialData))
    #expect(forgedAT.bytes[32] == 0x01)
}

@Test func extensionDataFlagFollowsExtensions() {
    let ext = CBORValue.map([(.text("credProtect"), .int(1))])
    let data = authData(flags: [.userPresent, .extensionData], attested: nil, extensions: ext)
    #expect(data.bytes[32] == 0x81)
    #expect(Array(data.bytes[37...]) == ext.encoded())
    #expect(!authData(flags: [.userPresent, .extensionData], attested: nil).flags.contains(.extensionData))
}

// MARK: - Parsing

@Test func parsingTheBytesGivesTheSameAuthenticatorData() throws {
    let ext = CBORValue.map([(.text("credProtect"), .int(2))])
    for original in [
        authData(flags: [.userPresent, .backupEligible], signCount: 7),
        authData(attested: nil),
        authData(attested: attested(idLength: 1023), extensions: ext),
        authData(attested: nil, extensions: ext),
    ] {
        let parsed = try AuthenticatorData(parsing: original.bytes)
        #expect(parsed == original)
        #expect(parsed.bytes == original.bytes)
    }
}

@Test func parsedFieldsAreReadFromTheirOffsets() throws {
    let parsed = try AuthenticatorData(parsing: authData(signCount: 0xA1B2_C3D4, attested: attested(idLength: 300)).bytes)
    #expect(parsed.signCount == 0xA1B2_C3D4)
    #expect(parsed.rpIdHash == SHA256.hash(Array("example.com".utf8)))
    #expect(parsed.attestedCredentialData?.aaguid == aaguid)
    #expect(parsed.attestedCredentialData?.credentialId == [UInt8](repeating: 0xC1, count: 300))
    #expect(parsed.attestedCredentialData?.publicKey == knownKey)
}

@Test func parseRejectsFewerThan37Bytes() {
    expectParseFails([UInt8](repeating: 0, count: 36))
    expectParseFails([])
}

@Test func parseRejectsTruncatedAttestedCredentialData() {
    let full = authData().bytes
    let key = 77, id = 20
    // Cut inside the key, the whole key, inside the id, the whole id, inside the length field,
    // inside the aaguid, and everything after the 37-byte header.
    for cut in [1, 10, key, key + 5, key + id, key + id + 1, key + id + 2 + 8, full.count - 37] {
        expectParseFails(Array(full.dropLast(cut)))
    }
}

@Test(arguments: [UInt16(0), 21, 1024, 0xFFFF])
func parseRejectsABadCredentialIdLength(length: UInt16) {
    expectParseFails(withCredentialIdLength(length))
}

@Test func parseRejectsTrailingBytes() {
    expectParseFails(authData().bytes + [0x00])
    expectParseFails(authData(attested: nil).bytes + [0x00])
}

@Test func parseRejectsAKeyThatIsNotES256() {
    var bytes = authData().bytes
    let algOffset = 75 + 4  // a5 01 02 03 |26|
    #expect(bytes[algOffset] == 0x26)
    bytes[algOffset] = 0x25  // alg -6
    expectParseFails(bytes)
}

// MARK: - COSE keys

@Test func coseKeyEncodesAsTheCanonicalEC2Map() {
    let expected = hexBytes("a5 01 02 03 26 20 01 21 58 20") + knownX + hexBytes("22 58 20") + knownY
    #expect(knownKey.cbor.encoded() == expected)
}

@Test func coseKeyParsesBackFromItsCBOR() throws {
    #expect(COSEKey(cbor: try CBORValue.decode(knownKey.cbor.encoded())) == knownKey)
}

@Test func coseKeyRejectsOtherKeyTypes() {
    let wrongAlg = CBORValue.map([(.int(1), .int(2)), (.int(3), .int(-257)), (.int(-1), .int(1)),
                                  (.int(-2), .bytes(knownX)), (.int(-3), .bytes(knownY))])
    let shortX = CBORValue.map([(.int(1), .int(2)), (.int(3), .int(-7)), (.int(-1), .int(1)),
                                (.int(-2), .bytes(Array(knownX.dropLast()))), (.int(-3), .bytes(knownY))])
    #expect(COSEKey(cbor: wrongAlg) == nil)
    #expect(COSEKey(cbor: shortX) == nil)
    #expect(COSEKey(cbor: .bytes(knownX)) == nil)
}

@Test func coseKeyFromAnUncompressedPoint() {
    #expect(COSEKey(uncompressedPoint: [0x04] + knownX + knownY) == knownKey)
    #expect(COSEKey(uncompressedPoint: [0x02] + knownX + knownY) == nil)
    #expect(COSEKey(uncompressedPoint: [0x04] + knownX) == nil)
}

@Test func subjectPublicKeyInfoMatchesOpenSSL() throws {
    let key = try PrivateKey.generate()
    let cose = key.publicKey
    #expect(cose.subjectPublicKeyInfo == key.subjectPublicKeyInfo)
    #expect(cose.subjectPublicKeyInfo.count == 91)
}

// MARK: - Crypto

@Test func sha256OfAbc() {
    #expect(SHA256.hash(Array("abc".utf8)) == hexBytes("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"))
    #expect(SHA256.hash([UInt8]()) == hexBytes("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"))
}

@Test func signaturesVerifyOnlyForTheSignedMessageAndKey() throws {
    let key = try PrivateKey.generate()
    let message = Array("authenticator data ‖ client data hash".utf8)
    let signature = try key.sign(message)
    #expect(SignatureVerifier.verify(signature: signature, message: message, spki: key.subjectPublicKeyInfo))

    var flippedMessage = message
    flippedMessage[5] ^= 0x01
    #expect(!SignatureVerifier.verify(signature: signature, message: flippedMessage, spki: key.subjectPublicKeyInfo))

    var flippedSignature = signature
    flippedSignature[flippedSignature.count - 1] ^= 0x01
    #expect(!SignatureVerifier.verify(signature: flippedSignature, message: message, spki: key.subjectPublicKeyInfo))

    let otherKey = try PrivateKey.generate()
    #expect(!SignatureVerifier.verify(signature: signature, message: message, spki: otherKey.subjectPublicKeyInfo))
    #expect(!SignatureVerifier.verify(signature: signature, message: message, spki: [0x30, 0x00]))
}

/// The key's DER encoding, trimmed to the length written.
private func privateKeyDER(_ key: PrivateKey) throws -> [UInt8] {
    var der = [UInt8](repeating: 0, count: key.privateKeyDERCount)
    let written = try der.withUnsafeMutableBytes { try key.writePrivateKeyDER(into: $0) }
    return Array(der.prefix(written))
}

private func loadKey(_ der: [UInt8]) throws -> PrivateKey {
    try der.withUnsafeBytes { try PrivateKey.load(der: $0) }
}

@Test func privateKeyDERRoundTripsToTheSameKey() throws {
    let key = try PrivateKey.generate()
    let loaded = try loadKey(try privateKeyDER(key))
    #expect(loaded.publicKey == key.publicKey)
    let signature = try loaded.sign([1, 2, 3])
    #expect(SignatureVerifier.verify(signature: signature, message: [1, 2, 3], spki: key.subjectPublicKeyInfo))
}

@Test func writingPrivateKeyDERIntoASmallBufferFails() throws {
    let key = try PrivateKey.generate()
    var buffer = [UInt8](repeating: 0, count: key.privateKeyDERCount - 1)
    #expect(throws: OpenSSLFailure.self) { _ = try buffer.withUnsafeMutableBytes { try key.writePrivateKeyDER(into: $0) } }
}

@Test func loadingAPrivateKeyRejectsGarbage() throws {
    let der = try privateKeyDER(try PrivateKey.generate())
    for garbage in [[], [0x30, 0x03, 0x02, 0x01, 0x01], [UInt8](repeating: 0x5A, count: 121), Array(der.dropLast()), der + [0x00]] {
        #expect(throws: OpenSSLFailure.self) { _ = try loadKey(garbage) }
    }
}
