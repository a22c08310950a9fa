/// The CTAP 2.1 extensions this authenticator answers (§12): hmac-secret (under WebAuthn's prf),
/// credProtect, credBlob, minPinLength and large blobs (largeBlobKey, with the blob kept by the
/// store). See docs/extensions.md.

/// Two 32-byte values, as hmac-secret takes salts and returns outputs (`second` optional).
package struct PRFValues: Sendable, Equatable {
    package var first: [UInt8]
    package var second: [UInt8]?

    package init(first: [UInt8], second: [UInt8]? = nil) {
        self.first = first
        self.second = second
    }
}

/// credProtect levels (CTAP 2.1 §12.1), with their WebAuthn names.
public enum CredentialProtectionPolicy: UInt8, Sendable, CaseIterable {
    case userVerificationOptional = 1
    case userVerificationOptionalWithCredentialIDList = 2
    case userVerificationRequired = 3

    public init?(webAuthnName: String) {
        guard let match = Self.allCases.first(where: { $0.webAuthnName == webAuthnName }) else { return nil }
        self = match
    }

    public var webAuthnName: String {
        switch self {
        case .userVerificationOptional: "userVerificationOptional"
        case .userVerificationOptionalWithCredentialIDList: "userVerificationOptionalWithCredentialIDList"
        case .userVerificationRequired: "userVerificationRequired"
        }
    }

    /// Whether a credential at this level takes part in a ceremony (a sign-in's discovery, a
    /// registration's excludeList) that did or did not verify the user and did or did not list ids.
    package func isVisible(userVerified: Bool, listed: Bool) -> Bool {
        switch self {
        case .userVerificationOptional: true
        case .userVerificationOptionalWithCredentialIDList: userVerified || listed
        case .userVerificationRequired: userVerified
        }
    }
}

/// Extension inputs to authenticatorMakeCredential.
package struct MakeCredentialExtensions: Sendable, Equatable {
    /// hmac-secret: `true` (the prf extension asks for it).
    package var hmacSecret = false
    /// CTAP 2.2 hmac-secret-mc: salts evaluated at creation (prf with `eval` at registration).
    package var hmacSecretSalts: PRFValues?
    package var credProtect: CredentialProtectionPolicy?
    /// credBlob: at most ``Authenticator/maximumCredBlobLength`` bytes, else not stored.
    package var credBlob: [UInt8]?
    package var minPinLength = false
    /// largeBlobKey: the credential can carry a large blob.
    package var largeBlobKey = false

    package init() {}
}

/// What makeCredential's extensions produced besides the authenticator data's extension map.
package struct MakeCredentialExtensionOutputs: Sendable, Equatable {
    /// hmac-secret-mc outputs (only when salts were given).
    package var hmacSecret: PRFValues?
    /// Whether a credBlob given was stored.
    package var credBlob: Bool?
    package var largeBlobSupported = false
    /// The new credential's largeBlobKey, when asked for.
    package var largeBlobKey: [UInt8]?
}

/// Extension inputs to authenticatorGetAssertion.
package struct GetAssertionExtensions: Sendable, Equatable {
    /// hmac-secret salts for whichever credential is used, unless ``hmacSecretByCredential``
    /// names that one.
    package var hmacSecret: PRFValues?
    package var hmacSecretByCredential: [[UInt8]: PRFValues] = [:]
    package var getCredBlob = false
    /// A security key's hmac-secret (CTAP 2.1 §12.5): the outputs go, sealed for the platform,
    /// into the signed authenticator data.
    package var hmacSecretSealed: SealedHMACSecret?
    package var largeBlobRead = false
    package var largeBlobWrite: [UInt8]?
    /// CTAP's largeBlobKey: the credential's key, when it has one (a security key's client keeps
    /// the blob in the key's large-blob array, not the authenticator in the passkey).
    package var largeBlobKey = false

    package init() {}

    /// The salts for `credentialId`, if any.
    func salts(for credentialId: [UInt8]) -> PRFValues? { hmacSecretByCredential[credentialId] ?? hmacSecret }
}

/// hmac-secret as a security key answers it (CTAP 2.1 §12.5): the salts the platform sent, and
/// how the outputs are encrypted for it (its PIN/UV auth protocol's `encrypt` under the shared
/// secret of its key agreement). The outputs take the CredRandom of the request's user
/// verification state, so they differ with and without it.
package struct SealedHMACSecret: Sendable, Equatable {
    package var salts: PRFValues
    package var seal: @Sendable ([UInt8]) throws(AuthenticatorError) -> [UInt8]

    package init(salts: PRFValues, seal: @escaping @Sendable ([UInt8]) throws(AuthenticatorError) -> [UInt8]) {
        self.salts = salts
        self.seal = seal
    }

    package static func == (a: SealedHMACSecret, b: SealedHMACSecret) -> Bool { a.salts == b.salts }
}

/// What getAssertion's extensions produced besides the authenticator data's extension map.
package struct GetAssertionExtensionOutputs: Sendable, Equatable {
    package var hmacSecret: PRFValues?
    /// getCredBlob: the stored blob (empty when none).
    package var credBlob: [UInt8]?
    /// largeBlob read: the blob in clear; `nil` when none is stored or none was asked for.
    package var largeBlob: [UInt8]?
    package var largeBlobWritten: Bool?
    /// The credential's largeBlobKey (asked for, and the credential has one).
    package var largeBlobKey: [UInt8]?
}

/// hmac-secret (CTAP 2.1 §12.5) for a platform authenticator: each credential's two CredRandom
/// values are derived from its private key, so a synced passkey gives the same outputs on every
/// device of the account.
package enum HMACSecret {
    static let withUVInfo = "hmac-secret CredRandomWithUV"
    static let withoutUVInfo = "hmac-secret CredRandomWithoutUV"

    /// WebAuthn L3 §10.1.4: the hmac-secret salt for a PRF input,
    /// SHA-256("WebAuthn PRF" ‖ 0x00 ‖ input).
    package static func salt(forPRFInput input: [UInt8]) -> [UInt8] {
        SHA256.hash(Array("WebAuthn PRF".utf8) + [0] + input)
    }

    /// CredRandomWithUV or CredRandomWithoutUV of the credential whose key is `key`.
    package static func credRandom(of key: PrivateKey, userVerified: Bool) throws(OpenSSLFailure) -> [UInt8] {
        try key.deriveSecret(info: userVerified ? withUVInfo : withoutUVInfo)
    }

    /// HMAC-SHA-256(CredRandom, salt) for each salt. The prf extension always takes the with-UV
    /// CredRandom: WebAuthn L3 §10.1.4 exposes one PRF per credential, "the one used for when user
    /// verification is performed", whatever the state of user verification.
    package static func evaluate(_ salts: PRFValues, key: PrivateKey, userVerified: Bool) throws(OpenSSLFailure) -> PRFValues {
        var credRandom = try credRandom(of: key, userVerified: userVerified)
        defer { for i in credRandom.indices { credRandom[i] = 0 } }
        return PRFValues(first: HMACSHA256.mac(key: credRandom, message: salts.first),
                         second: salts.second.map { HMACSHA256.mac(key: credRandom, message: $0) })
    }
}

/// A credential's large blob, sealed for the store under its largeBlobKey (derived from its
/// private key like CTAP's): nonce (12) ‖ AES-256-GCM(blob) ‖ tag (16), associated data
/// `"blob"` ‖ uint64LE(blob length), as CTAP 2.1 §6.10.3 seals large-blob array entries.
package enum LargeBlob {
    static let keyInfo = "largeBlobKey"
    /// The largest blob a write stores (CTAP's minimum large-blob storage is 1024 bytes).
    package static let maximumLength = 4096
    /// What sealing adds to a blob: the nonce (12) and the tag (16).
    package static let overhead = 28

    package static func key(of key: PrivateKey) throws(OpenSSLFailure) -> [UInt8] { try key.deriveSecret(info: keyInfo) }

    static func associatedData(length: Int) -> [UInt8] {
        Array("blob".utf8) + (0..<8).map { UInt8(truncatingIfNeeded: UInt64(length) >> (8 * UInt64($0))) }
    }

    package static func seal(_ blob: [UInt8], key: PrivateKey, nonce: [UInt8]) throws(OpenSSLFailure) -> [UInt8] {
        let blobKey = try Self.key(of: key)
        return nonce + (try AES256GCM.seal(blob, key: blobKey, nonce: nonce, associatedData: associatedData(length: blob.count)))
    }

    /// The blob in `sealed`; `nil` when it does not open under this key.
    package static func open(_ sealed: [UInt8], key: PrivateKey) throws(OpenSSLFailure) -> [UInt8]? {
        guard sealed.count >= AES256GCM.nonceLength + AES256GCM.tagLength else { return nil }
        let blobKey = try Self.key(of: key)
        let nonce = Array(sealed.prefix(AES256GCM.nonceLength))
        let body = Array(sealed.dropFirst(AES256GCM.nonceLength))
        return AES256GCM.open(body, key: blobKey, nonce: nonce,
                              associatedData: associatedData(length: body.count - AES256GCM.tagLength))
    }
}
