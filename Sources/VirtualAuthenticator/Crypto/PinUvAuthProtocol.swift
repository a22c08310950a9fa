/// A PIN/UV auth protocol as an authenticator runs it (CTAP 2.1 §6.5.4): the key-agreement key
/// pair a platform agrees a shared secret with, the cipher and MAC over that secret, and the
/// pinUvAuthToken the authenticator hands out encrypted under it. Protocol one is §6.5.6 (the
/// shared secret SHA-256(Z), AES-256-CBC with a zero IV, the first 16 bytes of HMAC-SHA-256),
/// protocol two §6.5.7 (two HKDF-SHA-256 keys from Z, AES-256-CBC with a random IV sent before the
/// ciphertext, the whole HMAC-SHA-256).
///
/// A value: the key keeps one per protocol while it has power, made at power-up (``init(_:random:)``
/// is the spec's `initialize()`), with a new key pair after a wrong PIN (``regenerate()``) and a
/// new token whenever one is issued (``resetPinUvAuthToken()``). Whether a token is in use, and
/// for what, is the key's state, not the protocol's.
package struct PinUvAuthProtocol: Sendable {
    /// The protocol numbers of `pinUvAuthProtocol` (authenticatorGetInfo's 0x06).
    package enum Version: Int, Sendable, CaseIterable {
        case one = 1, two = 2
    }

    /// The length of a pinUvAuthToken: 32 bytes in both protocols (CTAP 2.1 §6.5.4 allows 16 or 32
    /// in protocol one; python-fido2 and libfido2 take either).
    package static let tokenLength = 32
    /// COSE algorithm -25, ECDH-ES+HKDF-256, which the key-agreement key names "although this is
    /// NOT the algorithm actually used" (CTAP 2.1 §6.5.6, getPublicKey).
    package static let keyAgreementAlgorithm = -25
    /// Protocol two's HKDF salt and infos (CTAP 2.1 §6.5.7, kdf).
    static let hkdfSalt = [UInt8](repeating: 0, count: 32)
    static let hmacKeyInfo = Array("CTAP2 HMAC key".utf8)
    static let aesKeyInfo = Array("CTAP2 AES key".utf8)

    package let version: Version
    /// The authenticator's key-agreement key pair.
    package private(set) var keyAgreementKey: KeyAgreementKey
    /// The current pinUvAuthToken.
    package private(set) var pinUvAuthToken: [UInt8]
    /// Where the token and protocol two's IVs come from.
    let random: RandomSource

    /// `initialize()`: a fresh key-agreement key pair and a fresh token.
    package init(_ version: Version, random: RandomSource = .live) throws(OpenSSLFailure) {
        self.version = version
        self.random = random
        keyAgreementKey = try KeyAgreementKey.generate()
        pinUvAuthToken = random.bytes(Self.tokenLength)
    }

    /// The protocol with a known key-agreement key pair (known-answer tests).
    package init(_ version: Version, keyAgreementKey: KeyAgreementKey, random: RandomSource = .live) {
        self.version = version
        self.random = random
        self.keyAgreementKey = keyAgreementKey
        pinUvAuthToken = random.bytes(Self.tokenLength)
    }

    /// `regenerate()`: a new key-agreement key pair; secrets agreed with the old one stop working.
    package mutating func regenerate() throws(OpenSSLFailure) {
        keyAgreementKey = try KeyAgreementKey.generate()
    }

    /// `resetPinUvAuthToken()`: a new random token; the old one stops verifying anything.
    package mutating func resetPinUvAuthToken() {
        pinUvAuthToken = random.bytes(Self.tokenLength)
    }

    /// `getPublicKey()`: the key-agreement public key as a COSE_Key,
    /// `{1: 2, 3: -25, -1: 1, -2: x, -3: y}`.
    package func getPublicKey() -> CBORValue { Self.coseKey(keyAgreementKey) }

    static func coseKey(_ key: KeyAgreementKey) -> CBORValue {
        .map([(.int(1), .int(COSEKey.ktyEC2)), (.int(3), .int(keyAgreementAlgorithm)), (.int(-1), .int(COSEKey.crvP256)),
              (.int(-2), .bytes(key.x)), (.int(-3), .bytes(key.y))])
    }

    /// `decapsulate(peerCoseKey)`: the shared secret with the platform's key-agreement key, `nil`
    /// (CTAP1_ERR_INVALID_PARAMETER) when that is not a P-256 point on the curve in a COSE_Key
    /// shaped as ``getPublicKey()``'s. Throws only when OpenSSL itself fails.
    package func decapsulate(_ peerCoseKey: CBORValue) throws(OpenSSLFailure) -> [UInt8]? {
        guard let (x, y) = Self.point(of: peerCoseKey), let z = keyAgreementKey.sharedSecret(peerX: x, peerY: y) else { return nil }
        return try kdf(z)
    }

    /// The coordinates of a platform's key-agreement COSE_Key: kty EC2, crv P-256, 32-byte x and
    /// y, and alg -25 when it names one.
    static func point(of key: CBORValue) -> ([UInt8], [UInt8])? {
        guard key[.int(1)]?.intValue == COSEKey.ktyEC2, key[.int(-1)]?.intValue == COSEKey.crvP256,
              key[.int(3)].map({ $0.intValue == keyAgreementAlgorithm }) ?? true,
              let x = key[.int(-2)]?.bytesValue, x.count == 32, let y = key[.int(-3)]?.bytesValue, y.count == 32 else { return nil }
        return (x, y)
    }

    /// `kdf(Z)`: protocol one SHA-256(Z); protocol two the HMAC key ‖ the AES key, each
    /// HKDF-SHA-256(salt: 32 zero bytes, Z, L = 32, info "CTAP2 HMAC key" / "CTAP2 AES key").
    func kdf(_ z: [UInt8]) throws(OpenSSLFailure) -> [UInt8] {
        switch version {
        case .one:
            SHA256.hash(z)
        case .two:
            try HKDFSHA256.derive(ikm: z, salt: Self.hkdfSalt, info: Self.hmacKeyInfo, length: 32)
                + HKDFSHA256.derive(ikm: z, salt: Self.hkdfSalt, info: Self.aesKeyInfo, length: 32)
        }
    }

    /// `encrypt(key, demPlaintext)`: `nil` when the plaintext is not whole 16-byte blocks (no
    /// padding is added) or the key is not one of this protocol's.
    package func encrypt(key: [UInt8], _ plaintext: [UInt8]) -> [UInt8]? {
        switch version {
        case .one:
            guard key.count == 32 else { return nil }
            return AES256CBC.encrypt(plaintext, key: key, iv: Self.zeroIV)
        case .two:
            // The last 32 bytes of the shared secret are the AES key.
            guard key.count == 64 else { return nil }
            let iv = random.bytes(AES256CBC.blockLength)
            return AES256CBC.encrypt(plaintext, key: Array(key[32...]), iv: iv).map { iv + $0 }
        }
    }

    /// `decrypt(key, demCiphertext)`: `nil` (an error) when the ciphertext is not whole blocks —
    /// after protocol two's 16-byte IV — or the key is not one of this protocol's.
    package func decrypt(key: [UInt8], _ ciphertext: [UInt8]) -> [UInt8]? {
        switch version {
        case .one:
            guard key.count == 32 else { return nil }
            return AES256CBC.decrypt(ciphertext, key: key, iv: Self.zeroIV)
        case .two:
            guard key.count == 64, ciphertext.count >= AES256CBC.blockLength else { return nil }
            return AES256CBC.decrypt(Array(ciphertext[16...]), key: Array(key[32...]), iv: Array(ciphertext[..<16]))
        }
    }

    static let zeroIV = [UInt8](repeating: 0, count: AES256CBC.blockLength)

    /// `authenticate(key, message)`: protocol one the first 16 bytes of HMAC-SHA-256(key,
    /// message); protocol two all 32, keyed by the first 32 bytes of `key` (the shared secret's
    /// HMAC key, or the whole 32-byte token).
    package func authenticate(key: [UInt8], _ message: [UInt8]) -> [UInt8] {
        switch version {
        case .one: Array(HMACSHA256.mac(key: key, message: message).prefix(16))
        case .two: HMACSHA256.mac(key: Array(key.prefix(32)), message: message)
        }
    }

    /// `verify(key, message, signature)`: whether `signature` is ``authenticate(key:_:)``'s MAC of
    /// `message`, compared in constant time. (Whether a token `key` is in use is the caller's
    /// check, made before.)
    package func verify(key: [UInt8], _ message: [UInt8], signature: [UInt8]) -> Bool {
        ConstantTime.equal(authenticate(key: key, message), signature)
    }

    /// The platform's side, `encapsulate(peerCoseKey)`: a fresh key-agreement key of the
    /// platform's, as the COSE_Key it sends, and the shared secret with the authenticator's
    /// `peerCoseKey`; `nil` when that is not a P-256 point. What a client does before it sends a PIN.
    package static func encapsulate(_ version: Version, peerCoseKey: CBORValue, random: RandomSource = .live)
        throws(OpenSSLFailure) -> (keyAgreement: CBORValue, sharedSecret: [UInt8])? {
        let platform = try KeyAgreementKey.generate()
        guard let (x, y) = point(of: peerCoseKey), let z = platform.sharedSecret(peerX: x, peerY: y) else { return nil }
        let protocolRules = PinUvAuthProtocol(version, keyAgreementKey: platform, random: random)
        return (coseKey(platform), try protocolRules.kdf(z))
    }
}
