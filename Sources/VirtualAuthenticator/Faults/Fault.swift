/// Deliberately wrong responses, for testing an RP's rejection paths. Each fault breaks one thing
/// a correct RP checks (WebAuthn L3 §7.1 and §7.2), and only that: the rest of the response is
/// what an honest authenticator would send, so a test can tell which check caught it.
public enum Fault: String, CaseIterable, Sendable {
    case badSignature = "bad-signature"
    case wrongRpIdHash = "wrong-rp-id-hash"
    case wrongChallenge = "wrong-challenge"
    case wrongOrigin = "wrong-origin"
    case lookAlikeOrigin = "look-alike-origin"
    case subdomainOrigin = "subdomain-origin"
    case httpOrigin = "http-origin"
    case otherPortOrigin = "other-port-origin"
    case wrongType = "wrong-type"
    case upCleared = "up-cleared"
    case uvCleared = "uv-cleared"
    case uvClaimedWithoutCheck = "uv-claimed-without-check"
    case counterRegress = "counter-regress"
    case badCBOR = "bad-cbor"

    /// What the fault does, and the RP check that must catch it.
    public var summary: String {
        switch self {
        case .badSignature: "one bit of the signature flipped (assertion, or a signed attestation statement) — signature verification fails"
        case .wrongRpIdHash: "authenticator data carries the hash of another RP ID, correctly signed — the rpIdHash check fails"
        case .wrongChallenge: "clientDataJSON carries another challenge, correctly signed — the challenge check fails"
        case .wrongOrigin: "clientDataJSON names https://attacker.example as origin, correctly signed — the origin check fails"
        case .lookAlikeOrigin: "clientDataJSON names the origin with evil- before its host (https://evil-example.com for https://example.com), correctly signed — an origin check that matches the RP ID as a suffix passes it, an exact one fails"
        case .subdomainOrigin: "clientDataJSON names a subdomain of the origin (https://login.example.com for https://example.com), correctly signed — an origin check that takes any host under the RP ID passes it, one that lists the RP's origins fails"
        case .httpOrigin: "clientDataJSON names the origin with the other scheme (http:// for https://), correctly signed — an origin check that ignores the scheme passes it"
        case .otherPortOrigin: "clientDataJSON names the origin on another port (:8443, or the port plus one), correctly signed — an origin check that ignores the port passes it"
        case .wrongType: "clientDataJSON type is the other ceremony's, correctly signed — the type check fails"
        case .upCleared: "the UP flag is cleared, correctly signed — the user-presence check fails"
        case .uvCleared: "the user is verified (PIN checked) but the UV flag is cleared, correctly signed — the user-verification check of an RP that requires it fails (needs a request that verifies the user)"
        case .uvClaimedWithoutCheck: "the UV flag is set after signing, with no PIN checked — signature verification fails"
        case .counterRegress: "the sign count goes back below the last one reported, correctly signed — the counter check fails (needs a passkey made with --sign-counter that has signed before)"
        case .badCBOR: "the attestation object is cut one byte short — CBOR decoding fails"
        }
    }

    package enum Ceremony: Sendable { case registration, authentication }

    /// Whether the fault can be produced for `ceremony`: registration has a signature to break
    /// only when its attestation statement is signed, and neither a counter nor a bare UV flag an RP can check.
    package func applies(to ceremony: Ceremony, attestation: AttestationFormat = .none) -> Bool {
        switch self {
        case .badSignature: ceremony == .authentication || attestation.hasSignature
        case .uvClaimedWithoutCheck, .counterRegress: ceremony == .authentication
        case .badCBOR: ceremony == .registration
        case .wrongRpIdHash, .wrongChallenge, .wrongOrigin, .lookAlikeOrigin, .subdomainOrigin, .httpOrigin, .otherPortOrigin, .wrongType,
             .upCleared, .uvCleared: true
        }
    }

    /// Whether the fault can be produced with `credential`; checked before the user is asked
    /// anything, so a refused fault leaves every counter as it was.
    func check(for credential: Credential) throws(AuthenticatorError) {
        if self == .counterRegress, !credential.countsSignatures || credential.signCount < 1 {
            throw AuthenticatorError(.faultNotApplicable, "counter-regress needs a passkey made with --sign-counter that has signed before")
        }
    }

    /// Whether the fault can be produced when the user will (or will not) be verified; checked
    /// before the user is asked anything. Without verification UV is 0 anyway: `uv-cleared`
    /// would send an honest response under a fault's name.
    func check(userVerified: Bool) throws(AuthenticatorError) {
        if self == .uvCleared, !userVerified {
            throw AuthenticatorError(.faultNotApplicable, "uv-cleared needs a request that verifies the user (userVerification required or preferred, or a passkey whose key needs the PIN)")
        }
    }

    /// The attacker's RP ID and origin used by the faults that need another site.
    package static let attackerRpId = "attacker.example"

    // MARK: - Where each fault is applied

    /// Client data, before it is hashed and signed.
    func apply(to clientData: inout CollectedClientData) {
        switch self {
        case .wrongChallenge: clientData.challenge = SHA256.hash(clientData.challenge)
        case .wrongOrigin: clientData.origin = "https://" + Fault.attackerRpId
        case .lookAlikeOrigin:
            if let scheme = clientData.origin.range(of: "://") { clientData.origin.replaceSubrange(scheme, with: "://evil-") }
        case .subdomainOrigin:
            if let scheme = clientData.origin.range(of: "://") { clientData.origin.replaceSubrange(scheme, with: "://login.") }
        case .httpOrigin:
            clientData.origin = clientData.origin.hasPrefix("https://") ? "http://" + clientData.origin.dropFirst(8)
                : "https://" + clientData.origin.drop { $0 != "/" }.drop { $0 == "/" }
        case .otherPortOrigin:
            // The origin's port is after the last colon past the scheme's (an IPv6 host is bracketed).
            let afterScheme = clientData.origin.range(of: "://").map(\.upperBound) ?? clientData.origin.startIndex
            if let colon = clientData.origin[afterScheme...].lastIndex(of: ":"), !clientData.origin[colon...].contains("]"),
               let port = UInt32(clientData.origin[clientData.origin.index(after: colon)...]) {
                clientData.origin = clientData.origin[..<colon] + ":\(port == 65535 ? 8443 : port + 1)"
            } else {
                clientData.origin += ":8443"
            }
        case .wrongType: clientData.type = clientData.type == .create ? .get : .create
        default: break
        }
    }

    /// Authenticator data, before it is signed.
    func apply(to authenticatorData: inout AuthenticatorData, previousSignCount: UInt32) {
        switch self {
        case .wrongRpIdHash: authenticatorData.rpIdHash = SHA256.hash(Array(Fault.attackerRpId.utf8))
        case .upCleared: authenticatorData.flags.remove(.userPresent)
        case .uvCleared: authenticatorData.flags.remove(.userVerified)
        case .counterRegress:  // check(for:) made sure the count is at least 1
            authenticatorData.signCount = previousSignCount - 1
        default: break
        }
    }

    /// Signed bytes, after signing: the signature or the authenticator data itself.
    func apply(toSignature signature: inout [UInt8], authenticatorData: inout [UInt8]) {
        switch self {
        case .badSignature: signature[signature.count - 1] ^= 0x01  // a bit of s: still valid DER
        case .uvClaimedWithoutCheck: authenticatorData[32] |= AuthenticatorFlags.userVerified.rawValue
        default: break
        }
    }

    /// The encoded attestation object.
    func apply(toAttestationObject bytes: inout [UInt8]) {
        if self == .badCBOR { bytes.removeLast() }
    }
}
