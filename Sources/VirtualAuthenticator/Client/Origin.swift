import Curl
/// The caller's origin (HTML §7.5 "origin"), reduced to what WebAuthn needs: a tuple origin with
/// scheme, host and port, and its ASCII serialization for clientDataJSON.
public struct Origin: Equatable, Sendable {
    public let scheme: String
    /// The host in ASCII: lower case, internationalized labels as A-labels (`xn--…`).
    public let host: String
    public let port: Int?

    /// Parses an origin or any URL of it (the path, query and fragment are dropped).
    /// Throws `securityError` unless the origin is a secure context WebAuthn accepts: `https`, or
    /// `http` on `localhost` (and its subdomains), with a domain — not an IP address — as host.
    /// A Unicode host (`https://bücher.example`) is turned into its A-labels, as a browser does.
    public init(parsing text: String) throws(AuthenticatorError) {
        let parts: URLParts
        do { parts = try URLParts(text) } catch {
            throw AuthenticatorError(.securityError, "origin '\(text)' is not a URL with a host (\(error.reason))")
        }
        guard !parts.hasCredentials else {
            throw AuthenticatorError(.securityError, "origin '\(text)' must not carry credentials")
        }
        let scheme = parts.scheme, host = parts.host, port = parts.port
        let ascii = try Origin.domainToASCII(String(host), what: "origin host")
        let isLocalhost = ascii == "localhost" || ascii.hasSuffix(".localhost")
        guard scheme == "https" || (scheme == "http" && isLocalhost) else {
            throw AuthenticatorError(.securityError,
                "origin '\(text)' is not a secure context (use https://, or http://localhost)")
        }
        guard !Origin.isIPAddress(ascii) else {
            throw AuthenticatorError(.securityError, "origin host '\(ascii)' is an IP address, which cannot be an RP ID")
        }
        guard Origin.isDomain(ascii) else {
            throw AuthenticatorError(.securityError, "origin host '\(ascii)' is not a valid domain")
        }
        let defaultPort = scheme == "https" ? 443 : 80
        self.scheme = scheme
        self.host = ascii
        self.port = port.flatMap { $0 == defaultPort ? nil : $0 }
    }

    /// A top-level page's origin (the page that embeds a calling iframe): any potentially
    /// trustworthy origin — `https` with any host, IP addresses included, or `http` on loopback
    /// (`localhost`, `127.0.0.0/8`, `[::1]`). It is never an RP ID, so no domain rule applies.
    public init(parsingTopLevel text: String) throws(AuthenticatorError) {
        let parts: URLParts
        do { parts = try URLParts(text) } catch {
            throw AuthenticatorError(.securityError, "top origin '\(text)' is not a URL with a host (\(error.reason))")
        }
        let host = (try? Origin.domainToASCII(parts.host, what: "top origin host")) ?? parts.host.lowercased()
        let loopback = host == "localhost" || host.hasSuffix(".localhost") || host.hasPrefix("127.") || host == "[::1]" || host == "::1"
        guard parts.scheme == "https" || (parts.scheme == "http" && loopback) else {
            throw AuthenticatorError(.securityError, "top origin '\(text)' is not a secure context (use https://, or http on loopback)")
        }
        let defaultPort = parts.scheme == "https" ? 443 : 80
        scheme = parts.scheme
        self.host = host.contains(":") && !host.hasPrefix("[") ? "[" + host + "]" : host
        port = parts.port.flatMap { $0 == defaultPort ? nil : $0 }
    }

    /// The ASCII serialization (HTML §7.5): `scheme://host[:port]`.
    public var serialized: String {
        "\(scheme)://\(host)" + (port.map { ":\($0)" } ?? "")
    }

    /// A host as the URL Standard's host parser leaves a domain: ASCII, lower case. Names with
    /// non-ASCII characters go through IDNA (libidn2); ASCII names are lower-cased and their
    /// A-labels checked.
    static func domainToASCII(_ host: String, what: String) throws(AuthenticatorError) -> String {
        guard host.unicodeScalars.allSatisfy(\.isASCII) else {
            switch IDNA.toASCII(host) {
            case .success(let ascii): return ascii
            case .failure(let refusal):
                throw AuthenticatorError(.securityError, "\(what) '\(host)' is not a valid internationalized domain name (\(refusal.reason))")
            }
        }
        return host.lowercased()
    }

    /// An IPv6 literal (`[::1]`), or a host whose last label is a number (URL Standard "ends in a
    /// number": decimal, or `0x` hexadecimal), which makes it an IPv4 address.
    static func isIPAddress(_ host: String) -> Bool {
        host.hasPrefix("[") || host.split(separator: ".", omittingEmptySubsequences: false).last.map(endsInNumber) == true
    }

    /// A lower-case ASCII domain, as an RP ID must be: dot-separated labels of 1–63 letters, digits
    /// and hyphens, neither starting nor ending with a hyphen, 253 bytes at most, not an IP address;
    /// an `xn--` label must be a valid A-label. (Hand-written: libidn2 holds ASCII labels to
    /// IDNA2008's stricter hyphen rules, which browsers do not apply to them.)
    static func isDomain(_ host: String) -> Bool {
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        guard host.utf8.count <= 253, !labels.isEmpty, !isIPAddress(host) else { return false }
        return labels.allSatisfy { label in
            !label.isEmpty && label.utf8.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
                && (!label.hasPrefix("xn--") || IDNA.isValidALabel(label))
        }
    }

    private static func endsInNumber(_ label: Substring) -> Bool {
        if !label.isEmpty, label.allSatisfy({ ("0"..."9").contains($0) }) { return true }
        guard label.hasPrefix("0x") else { return false }
        return label.dropFirst(2).allSatisfy { ("0"..."9").contains($0) || ("a"..."f").contains($0) }
    }
}
