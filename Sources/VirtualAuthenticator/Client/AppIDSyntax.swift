/// Whether an `appid` extension value parses as a URL, as the page's URL parser (the URL Standard's
/// basic URL parser, with no base) would: Chromium refuses one that does not with SyntaxError
/// ("neither empty/null nor a valid URL") before anything is asked. An approximation of that
/// parser, which refuses what it certainly refuses (docs/conformance.md, "Not modelled"):
/// no scheme, and for a special scheme other than `file` an empty host, a host with a forbidden
/// code point, or a port that is not at most 65535 in digits.
enum AppIDSyntax {
    static let special: Set<String> = ["http", "https", "ws", "wss", "ftp"]
    /// Forbidden domain code points of the URL Standard among ASCII (C0 controls, space and DEL
    /// too; `%` unless it starts a percent-encoded byte); IPv6 literals (`[…]`) are let through.
    static let forbidden = Set("\u{20}#/:<>?@[\\]^|\u{7F}".unicodeScalars)

    static func isValidURL(_ text: String) -> Bool {
        // Leading and trailing C0 controls and spaces are stripped, tabs and newlines removed.
        var scalars = Array(text.unicodeScalars)
        while let first = scalars.first, first.value <= 0x20 { scalars.removeFirst() }
        while let last = scalars.last, last.value <= 0x20 { scalars.removeLast() }
        scalars.removeAll { $0 == "\t" || $0 == "\n" || $0 == "\r" }
        // scheme: ASCII alpha, then alphanumerics, +, -, . up to the first ':'.
        guard let colon = scalars.firstIndex(of: ":"), colon > 0, isAlpha(scalars[0]),
              scalars[1..<colon].allSatisfy({ isAlpha($0) || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0) })
        else { return false }
        let scheme = String(String.UnicodeScalarView(scalars[..<colon])).lowercased()
        guard special.contains(scheme) else { return true }  // file: and opaque paths parse
        // Special authority: slashes (and backslashes) skipped, then userinfo@host:port.
        var rest = scalars[(colon + 1)...].drop { $0 == "/" || $0 == "\\" }
        if let end = rest.firstIndex(where: { "/\\?#".unicodeScalars.contains($0) }) { rest = rest[..<end] }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        var host = Array(rest)
        if host.first == "[" {
            guard let close = host.firstIndex(of: "]") else { return false }
            let after = host[(close + 1)...]
            return after.isEmpty || (after.first == ":" && validPort(Array(after.dropFirst())))
        }
        if let portColon = host.firstIndex(of: ":") {
            guard validPort(Array(host[(portColon + 1)...])) else { return false }
            host = Array(host[..<portColon])
        }
        for (i, s) in host.enumerated() where s == "%" {
            guard i + 2 < host.count, host[i + 1].properties.isASCIIHexDigit, host[i + 2].properties.isASCIIHexDigit else { return false }
        }
        return !host.isEmpty && !host.contains { $0.value < 0x20 || forbidden.contains($0) }
    }

    private static func isAlpha(_ s: Unicode.Scalar) -> Bool { ("a"..."z").contains(s) || ("A"..."Z").contains(s) }

    private static func validPort(_ digits: [Unicode.Scalar]) -> Bool {
        guard digits.allSatisfy({ ("0"..."9").contains($0) }) else { return false }
        let significant = digits.drop { $0 == "0" }
        return significant.count <= 5 && (Int(String(String.UnicodeScalarView(significant))) ?? 0) <= 65535
    }
}
