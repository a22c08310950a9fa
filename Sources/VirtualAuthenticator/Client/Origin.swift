/// The caller's origin (HTML §7.5 "origin"), reduced to what WebAuthn needs: a tuple origin with
/// scheme, host and port, and its ASCII serialization for clientDataJSON.
public struct Origin: Equatable, Sendable {
    public let scheme: String
    public let host: String
    public let port: Int?

    /// Parses an origin or any URL of it (the path, query and fragment are dropped).
    /// Throws `securityError` unless the origin is a secure context WebAuthn accepts: `https`, or
    /// `http` on `localhost` (and its subdomains), with a domain — not an IP address — as host.
    public init(parsing text: String) throws(AuthenticatorError) {
        // scheme "://" [userinfo "@"] host [":" port] [path / query / fragment]
        guard let schemeEnd = text.range(of: "://") else {
            throw AuthenticatorError(.securityError, "origin '\(text)' is not a URL with a host")
        }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        let afterScheme = text[schemeEnd.upperBound...]
        let authority = afterScheme.prefix { !"/?#".contains($0) }
        guard !authority.contains("@") else {
            throw AuthenticatorError(.securityError, "origin '\(text)' must not carry credentials")
        }
        var host = Substring(authority)
        var port: Int? = nil
        if let colon = authority.lastIndex(of: ":"), !authority.hasPrefix("[") {
            host = authority[..<colon]
            let digits = authority[authority.index(after: colon)...]
            guard let number = Int(digits), (0...65535).contains(number), digits.allSatisfy(\.isASCII) else {
                throw AuthenticatorError(.securityError, "origin '\(text)' has a bad port")
            }
            port = number
        }
        let lowered = host.lowercased()
        guard !lowered.isEmpty else { throw AuthenticatorError(.securityError, "origin '\(text)' is not a URL with a host") }
        guard lowered.unicodeScalars.allSatisfy(\.isASCII) else {
            throw AuthenticatorError(.securityError,
                "origin host '\(host)' is not ASCII: give internationalized names in their xn-- (Punycode) form")
        }
        let isLocalhost = lowered == "localhost" || lowered.hasSuffix(".localhost")
        guard scheme == "https" || (scheme == "http" && isLocalhost) else {
            throw AuthenticatorError(.securityError,
                "origin '\(text)' is not a secure context (use https://, or http://localhost)")
        }
        guard Origin.isDomain(lowered) else {
            throw AuthenticatorError(.securityError, "origin host '\(lowered)' is not a valid domain (IP addresses cannot be RP IDs)")
        }
        let defaultPort = scheme == "https" ? 443 : 80
        self.scheme = scheme
        self.host = lowered
        self.port = port.flatMap { $0 == defaultPort ? nil : $0 }
    }

    /// The ASCII serialization (HTML §7.5): `scheme://host[:port]`.
    public var serialized: String {
        "\(scheme)://\(host)" + (port.map { ":\($0)" } ?? "")
    }

    /// A lower-case ASCII domain: dot-separated labels of letters, digits and hyphens, whose last
    /// label is not a number (URL Standard "ends in a number": decimal, or `0x` hexadecimal), which
    /// would make the host an IPv4 address.
    static func isDomain(_ host: String) -> Bool {
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        guard host.utf8.count <= 253, !labels.isEmpty, let last = labels.last, !endsInNumber(last) else { return false }
        // An A-label must decode (URL Standard "domain to ASCII" fails on bad Punycode).
        guard labels.allSatisfy({ !$0.hasPrefix("xn--") || Punycode.decodeLabel(String($0)) != nil }) else { return false }
        return labels.allSatisfy { label in
            !label.isEmpty && label.utf8.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
        }
    }
}

private func endsInNumber(_ label: Substring) -> Bool {
    if !label.isEmpty, label.allSatisfy({ ("0"..."9").contains($0) }) { return true }
    guard label.hasPrefix("0x") else { return false }
    return label.dropFirst(2).allSatisfy { ("0"..."9").contains($0) || ("a"..."f").contains($0) }
}

/// The RP ID rule (WebAuthn L3 §5.1.3 step 8, §5.1.4.1 step 8): the RP ID must equal the origin's
/// effective domain or be a registrable domain suffix of it (HTML §7.2).
public enum RelyingPartyIdentifier {
    public static func validate(_ rpId: String?, for origin: Origin,
                                suffixes: PublicSuffixList) throws(AuthenticatorError) -> String {
        try validate(rpId, for: origin) { suffixes }
    }

    public static func validate(_ rpId: String?, for origin: Origin,
                                suffixes loadSuffixes: () -> PublicSuffixList = { .system }) throws(AuthenticatorError) -> String {
        guard let rpId else { return origin.host }
        let candidate = rpId.lowercased()
        if candidate == origin.host { return candidate }
        guard Origin.isDomain(candidate) else {
            throw AuthenticatorError(.securityError, "rp id '\(rpId)' is not a valid domain")
        }
        guard origin.host.hasSuffix("." + candidate) else {
            throw AuthenticatorError(.securityError,
                "rp id '\(rpId)' is neither the origin's host '\(origin.host)' nor a suffix of it")
        }
        let suffixes = loadSuffixes()
        let hostSuffix = suffixes.publicSuffix(of: origin.host)
        if candidate == suffixes.publicSuffix(of: candidate) || hostSuffix.hasSuffix("." + candidate) || hostSuffix == candidate {
            throw AuthenticatorError(.securityError, "rp id '\(rpId)' is a public suffix; it cannot be registrable")
        }
        return candidate
    }
}
