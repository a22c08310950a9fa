import VirtualAuthenticator

/// What a registration can make, as one set of rules: `credential import` refuses a passkey that
/// breaks any of them (an exported file is outside input, however it was sealed), and `vault
/// check` reports the passkeys of a vault that break them (an import from before these checks).
/// Each rule names the limit registration keeps. Import also refuses an RP ID that is a public
/// suffix (``isImportable(_:suffixes:)``).
enum PasskeyRules {
    /// A registration's credential ids: each profile's length (16 to 65 bytes, as the real
    /// authenticators make them), and any a passkey imported from elsewhere has, from WebAuthn's
    /// 16 up to the 1,023 CTAP 2.1 allows.
    static let credentialIdLengths = 16...1023
    /// WebAuthn L3 §5.4.3: a user handle is 1 to 64 bytes.
    static let userHandleLengths = 1...64
    /// CTAP 2.1 §12.2 maxCredBlobLength.
    static let maximumCredBlobLength = 32
    /// What the authenticator keeps of `user.name` and `user.displayName`, in UTF-8 bytes (see
    /// ``storedName(_:)``).
    static let maximumNameBytes = 64

    /// `name` as the authenticator stores it: at most 64 bytes of UTF-8, cut at the end of a
    /// character (never inside one). CTAP 2.1 §6.1 lets an authenticator truncate `user.name` and
    /// `user.displayName` to 64 bytes, and WebAuthn L3 §6.4.1 (String Truncation) asks that a cut
    /// respect UTF-8 sequence boundaries; 64 bytes is the least an authenticator must keep. So an
    /// RP's megabyte `user.name` is kept as a name, not as a megabyte.
    static func storedName(_ name: String) -> String {
        guard name.utf8.count > maximumNameBytes else { return name }
        var kept = "", bytes = 0
        for scalar in name.unicodeScalars {
            let length = String(scalar).utf8.count
            guard bytes + length <= maximumNameBytes else { break }
            kept.unicodeScalars.append(scalar)
            bytes += length
        }
        return kept
    }

    /// Whether a passkey for `rpId` can be taken in without the origin it was made for: a
    /// lower-case ASCII domain (A-labels) that is not a public suffix — the rule a registration
    /// applies to an `rp.id` that differs from its origin's host (HTML §7.2, through the same
    /// list) — or `localhost`. A registration at an origin whose host is itself a public suffix
    /// (`https://github.io`) may claim it, as Chromium allows; an exported passkey carries no
    /// origin to show that, so an import refuses it (`com` is what a forged export names).
    static func isImportable(_ rpId: String, suffixes: PublicSuffixList) -> Bool {
        guard RelyingPartyIdentifier.isWellFormed(rpId) else { return false }
        return rpId == "localhost" || !suffixes.isPublicSuffix(rpId)
    }

    /// The algorithms a passkey made as `profile` can have: that profile's, or, with no profile
    /// (a passkey from before profiles), the default profile's.
    static func algorithms(ofProfile profile: String) -> [COSEAlgorithm]? {
        profile.isEmpty ? AuthenticatorProfile.default.algorithms : AuthenticatorProfile.named(profile)?.algorithms
    }

    /// Every rule `credential` breaks, as reasons (empty: a registration could have made it).
    /// `key` is its private key when at hand: then the key pair and the large blob's seal are
    /// checked too.
    static func problems(of credential: Credential, key: PrivateKey?) -> [String] {
        var out = [String]()
        if !credentialIdLengths.contains(credential.id.count) { out.append("the credential id is not 16 to 1023 bytes") }
        if !RelyingPartyIdentifier.isWellFormed(credential.rpId) { out.append("the RP ID is not a DNS name in A-label form") }
        if !userHandleLengths.contains(credential.userHandle.count) { out.append("the user handle is not 1 to 64 bytes") }
        if let algorithms = algorithms(ofProfile: credential.profile) {
            if !algorithms.contains(credential.publicKey.algorithm) {
                out.append("profile \(credential.profile.isEmpty ? AuthenticatorProfile.default.name : credential.profile) makes no \(credential.publicKey.algorithm.name) keys")
            }
        } else {
            out.append("no profile named '\(credential.profile)'")
        }
        if !credential.aaguid.isEmpty && credential.aaguid.count != 16 { out.append("the AAGUID is not 16 bytes") }
        if credential.backupState && !credential.backupEligible { out.append("BS is set without BE") }
        if let blob = credential.credBlob, blob.count > maximumCredBlobLength { out.append("the credBlob is over 32 bytes") }
        if let sealed = credential.largeBlob {
            let length = sealed.count - LargeBlob.overhead
            if length < 0 || length > LargeBlob.maximumLength {
                out.append("the large blob is \(max(length, 0)) bytes sealed in \(sealed.count); a write stores at most \(LargeBlob.maximumLength)")
            } else if let key, (try? LargeBlob.open(sealed, key: key)).flatMap({ $0 }) == nil {
                out.append("the large blob does not open under the passkey's largeBlobKey")
            }
        }
        if let key, key.publicKey != credential.publicKey { out.append("its private key does not match its public key") }
        return out
    }
}
