import CCurl

/// A URL split into the parts an origin needs, by libcurl's URL API (`curl_url`): the scheme,
/// whether it carries credentials, the host (percent-decoded, IPv4 numbers in their dotted form),
/// and the port as written. libcurl refuses what is not a URL — a port that is not 0–65535 in
/// plain digits, spaces in the host, a missing scheme — so none of that is parsed here by hand.
public struct URLParts {
    public let scheme: String
    public let host: String
    public let port: Int?
    public let hasCredentials: Bool

    public struct Refusal: Error {
        public let reason: String
    }

    public init(_ text: String) throws(Refusal) {
        guard let handle = curl_url() else { throw Refusal(reason: "libcurl could not allocate a URL handle") }
        defer { curl_url_cleanup(handle) }
        var rc = curl_url_set(handle, CURLUPART_URL, text, UInt32(CURLU_NON_SUPPORT_SCHEME))
        // An empty port (`https://example.com:`) is a URL without one (URL Standard, port state:
        // an empty buffer leaves the port null). libcurl 7.88 agrees; older ones call it a bad
        // port number, so ask them again without the colon.
        if rc == CURLUE_BAD_PORT_NUMBER, let bare = Self.droppingEmptyPort(text) {
            rc = curl_url_set(handle, CURLUPART_URL, bare, UInt32(CURLU_NON_SUPPORT_SCHEME))
        }
        guard rc == CURLUE_OK else { throw Refusal(reason: String(cString: curl_url_strerror(rc))) }
        func part(_ which: CURLUPart) -> String? {
            var value: UnsafeMutablePointer<CChar>? = nil
            guard curl_url_get(handle, which, &value, 0) == CURLUE_OK, let value else { return nil }
            defer { curl_free(value) }
            return String(cString: value)
        }
        guard let scheme = part(CURLUPART_SCHEME), let host = part(CURLUPART_HOST), !host.isEmpty else {
            throw Refusal(reason: "no host")
        }
        self.scheme = scheme.lowercased()
        self.host = host
        self.port = part(CURLUPART_PORT).flatMap { Int($0) }
        self.hasCredentials = part(CURLUPART_USER) != nil || part(CURLUPART_PASSWORD) != nil
    }

    /// `text` without the colon of an empty port at the end of its authority (`scheme://host:`
    /// followed by nothing, `/`, `?` or `#`); `nil` when it has none.
    static func droppingEmptyPort(_ text: String) -> String? {
        let characters = Array(text)
        guard let colon = characters.indices.first(where: { characters[$0...].starts(with: "://") }) else { return nil }
        let start = text.index(text.startIndex, offsetBy: colon + 3)
        let end = text[start...].firstIndex(where: { "/?#".contains($0) }) ?? text.endIndex
        let authority = text[start..<end]
        guard authority.hasSuffix(":"), !authority.dropLast().hasSuffix(":") else { return nil }
        return String(text[..<text.index(before: end)]) + text[end...]
    }
}
