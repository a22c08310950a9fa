/// The RP ID rule (WebAuthn L3 §5.1.3 step 8, §5.1.4.1 step 8): the RP ID must equal the origin's
/// effective domain or be a registrable domain suffix of it (HTML §7.2).
package enum RelyingPartyIdentifier {
    /// `rpId` as the client compares and hashes it: ASCII, lower case, Unicode labels as A-labels.
    package static func ascii(_ rpId: String) throws(AuthenticatorError) -> String {
        try Origin.domainToASCII(rpId, what: "rp id")
    }

    /// Whether `rpId` is an RP ID a registration could have recorded: a domain in its ASCII form
    /// (lower case, A-labels), as ``validate(_:for:suffixes:)`` returns them.
    package static func isWellFormed(_ rpId: String) -> Bool {
        (try? ascii(rpId)) == rpId && Origin.isDomain(rpId)
    }

    /// The RP ID to use: the origin's host when `rpId` is absent, else `rpId` once it passes the
    /// rule. The RP ID is compared as given, byte for byte, as Chrome does: not lower-cased, not
    /// mapped through IDNA, so `EXAMPLE.com` or `bücher.example` is a SecurityError (write the
    /// lower-case ASCII form, `xn--bcher-kva.example`).
    package static func validate(_ rpId: String?, for origin: Origin,
                                suffixes: @autoclosure () -> PublicSuffixList = .system) throws(AuthenticatorError) -> String {
        guard let rpId else { return origin.host }
        let candidate = rpId
        if candidate == origin.host { return candidate }
        guard Origin.isDomain(candidate) else {
            let hint = (try? ascii(rpId)).map { Origin.isDomain($0) ? "; RP IDs are compared as given: write '\(EchoedInput.text($0))'" : "" } ?? ""
            throw AuthenticatorError(.securityError, "rp id '\(EchoedInput.text(rpId))' is not a lower-case ASCII domain\(hint)")
        }
        guard origin.host.hasSuffix("." + candidate) else {
            throw AuthenticatorError(.securityError,
                "rp id '\(EchoedInput.text(rpId))' is neither the origin's host '\(EchoedInput.text(origin.host))' nor a suffix of it")
        }
        // HTML §7.2 step 4.3: not a public suffix itself, nor inside the host's public suffix.
        let list = suffixes()
        let hostSuffix = list.publicSuffix(of: origin.host)
        if list.isPublicSuffix(candidate) || hostSuffix == candidate || hostSuffix.hasSuffix("." + candidate) {
            throw AuthenticatorError(.securityError, "rp id '\(EchoedInput.text(rpId))' is a public suffix; it cannot be registrable")
        }
        return candidate
    }
}
