import Curl
import Glibc
import Synchronization
/// The caller's origin (HTML §7.5 "origin"), reduced to what WebAuthn needs: a tuple origin with
/// scheme, host and port, and its ASCII serialization for clientDataJSON.
package struct Origin: Equatable, Sendable {
    package let scheme: String
    /// The host in ASCII: lower case, internationalized labels as A-labels (`xn--…`).
    package let host: String
    package let port: Int?

    /// Parses an origin or any URL of it (the path, query and fragment are dropped).
    /// Throws `securityError` unless the origin is a secure context WebAuthn accepts: `https`, or
    /// `http` on `localhost` (and its subdomains), with a domain — not an IP address — as host.
    /// A Unicode host (`https://bücher.example`) is turned into its A-labels, as a browser does.
    package init(parsing text: String) throws(AuthenticatorError) {
        let parts: URLParts
        do { parts = try URLParts(text) } catch {
            throw AuthenticatorError(.securityError, "origin '\(EchoedInput.text(text))' is not a URL with a host (\(error.reason))")
        }
        guard !parts.hasCredentials else {
            throw AuthenticatorError(.securityError, "origin '\(EchoedInput.text(text))' must not carry credentials")
        }
        let scheme = parts.scheme, host = parts.host, port = parts.port
        let ascii = try Origin.domainToASCII(String(host), what: "origin host")
        let isLocalhost = ascii == "localhost" || ascii.hasSuffix(".localhost")
        // http on a loopback address is a secure context too (Secure Contexts §3.2, as Chromium
        // has it): the page is refused for its IP address, below, not as insecure.
        guard scheme == "https" || (scheme == "http" && (isLocalhost || Origin.isLoopbackAddress(ascii))) else {
            throw AuthenticatorError(.securityError,
                "origin '\(EchoedInput.text(text))' is not a secure context (use https://, or http://localhost)")
        }
        guard !Origin.isIPAddress(ascii) else {
            // Chromium's words first ("This is an invalid domain."), then why.
            throw AuthenticatorError(.securityError,
                "This is an invalid domain: origin host '\(EchoedInput.text(ascii))' is an IP address, which cannot be an RP ID (use a name, such as http://localhost)")
        }
        guard Origin.isDomain(ascii) else {
            throw AuthenticatorError(.securityError, "origin host '\(EchoedInput.text(ascii))' is not a valid domain")
        }
        let defaultPort = scheme == "https" ? 443 : 80
        self.scheme = scheme
        self.host = ascii
        self.port = port.flatMap { $0 == defaultPort ? nil : $0 }
    }

    /// The last caller origin parsed, by its exact text: an in-process caller makes its ceremonies
    /// from one origin again and again, and parsing it (libcurl's URL parser, the domain rules)
    /// costs more than the rest of the client's checks. A text that fails is not kept.
    private static let last = Mutex<(text: String, origin: Origin)?>(nil)

    /// ``init(parsing:)``, remembered for the last text that parsed.
    static func parsed(_ text: String) throws(AuthenticatorError) -> Origin {
        if let last = last.withLock({ $0 }), last.text.utf8.elementsEqual(text.utf8) { return last.origin }
        let origin = try Origin(parsing: text)
        last.withLock { $0 = (text, origin) }
        return origin
    }

    /// A top-level page's origin (the page that embeds a calling iframe): any potentially
    /// trustworthy origin — `https` with any host, IP addresses included, or `http` on loopback
    /// (`localhost`, `127.0.0.0/8`, `[::1]`). It is never an RP ID, so no domain rule applies.
    package init(parsingTopLevel text: String) throws(AuthenticatorError) {
        let parts: URLParts
        do { parts = try URLParts(text) } catch {
            throw AuthenticatorError(.securityError, "top origin '\(EchoedInput.text(text))' is not a URL with a host (\(error.reason))")
        }
        let host = (try? Origin.domainToASCII(parts.host, what: "top origin host")) ?? parts.host.lowercased()
        let loopback = host == "localhost" || host.hasSuffix(".localhost") || host.hasPrefix("127.") || host == "[::1]" || host == "::1"
        guard parts.scheme == "https" || (parts.scheme == "http" && loopback) else {
            throw AuthenticatorError(.securityError, "top origin '\(EchoedInput.text(text))' is not a secure context (use https://, or http on loopback)")
        }
        let defaultPort = parts.scheme == "https" ? 443 : 80
        scheme = parts.scheme
        self.host = host.contains(":") && !host.hasPrefix("[") ? "[" + host + "]" : host
        port = parts.port.flatMap { $0 == defaultPort ? nil : $0 }
    }

    /// The ASCII serialization (HTML §7.5): `scheme://host[:port]`.
    package var serialized: String {
        scheme + "://" + host + (port.map { ":" + String($0) } ?? "")
    }

    /// A host as the URL Standard's host parser leaves a domain: ASCII, lower case. Names with
    /// non-ASCII characters go through IDNA (libidn2); ASCII names are lower-cased and their
    /// A-labels checked.
    static func domainToASCII(_ host: String, what: String) throws(AuthenticatorError) -> String {
        guard host.unicodeScalars.allSatisfy(\.isASCII) else {
            switch IDNA.toASCII(host) {
            case .success(let ascii): return ascii
            case .failure(let refusal):
                throw AuthenticatorError(.securityError, "\(what) '\(EchoedInput.text(host))' is not a valid internationalized domain name (\(refusal.reason))")
            }
        }
        return host.lowercased()
    }

    /// An IPv6 literal (`[::1]`), or a host whose last label is a number (URL Standard "ends in a
    /// number": decimal, or `0x` hexadecimal), which makes it an IPv4 address.
    static func isIPAddress(_ host: String) -> Bool {
        let utf8 = host.utf8
        // Byte by byte for an ASCII host (what the URL parser leaves); by characters otherwise,
        // where a combining mark would join the `[` or `.` before it.
        guard utf8.allSatisfy({ $0 < 0x80 }) else {
            return host.hasPrefix("[") || host.split(separator: ".", omittingEmptySubsequences: false).last.map(endsInNumber) == true
        }
        if utf8.first == UInt8(ascii: "[") { return true }
        let start = utf8.lastIndex(of: UInt8(ascii: ".")).map(utf8.index(after:)) ?? utf8.startIndex
        return endsInNumber(utf8[start...])
    }

    /// An address on loopback, as the URL parser leaves it: `127.0.0.0/8`, or `[::1]` however
    /// it is written.
    static func isLoopbackAddress(_ host: String) -> Bool {
        if host.hasPrefix("[") && host.hasSuffix("]") {
            var address = in6_addr()
            guard inet_pton(AF_INET6, String(host.dropFirst().dropLast()), &address) == 1 else { return false }
            return withUnsafeBytes(of: &address) { $0.elementsEqual([UInt8](repeating: 0, count: 15) + [1]) }
        }
        var address = in_addr()
        guard inet_pton(AF_INET, host, &address) == 1 else { return false }
        return withUnsafeBytes(of: &address) { $0.first == 127 }
    }

    /// A lower-case ASCII domain, as an RP ID must be: dot-separated labels of 1–63 letters, digits
    /// and hyphens, neither starting nor ending with a hyphen, 253 bytes at most, not an IP address;
    /// an `xn--` label must be a valid A-label. (Hand-written: libidn2 holds ASCII labels to
    /// IDNA2008's stricter hyphen rules, which browsers do not apply to them.)
    static func isDomain(_ host: String) -> Bool {
        let utf8 = host.utf8
        guard utf8.count <= 253, !isIPAddress(host) else { return false }
        // Every byte a letter, digit, hyphen or dot, so a non-ASCII host is none.
        return utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).allSatisfy { label in
            !label.isEmpty && label.count <= 63 && label.first != UInt8(ascii: "-") && label.last != UInt8(ascii: "-")
                && label.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "-") }
                && (!label.starts(with: "xn--".utf8) || IDNA.isValidALabel(Substring(label)))
        }
    }

    private static func endsInNumber(_ label: Substring) -> Bool {
        if !label.isEmpty, label.allSatisfy({ ("0"..."9").contains($0) }) { return true }
        guard label.hasPrefix("0x") else { return false }
        return label.dropFirst(2).allSatisfy { ("0"..."9").contains($0) || ("a"..."f").contains($0) }
    }

    /// ``endsInNumber(_:)`` of an ASCII label, byte by byte.
    private static func endsInNumber(_ label: Substring.UTF8View) -> Bool {
        let isDigit = { (c: UInt8) in (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) }
        if !label.isEmpty, label.allSatisfy(isDigit) { return true }
        guard label.starts(with: "0x".utf8) else { return false }
        return label.dropFirst(2).allSatisfy { isDigit($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
    }
}
