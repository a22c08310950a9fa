import CCurl

/// A URL split into the parts an origin needs, by libcurl's URL API (`curl_url`): the scheme,
/// whether it carries credentials, the host (percent-decoded, IPv4 numbers in their dotted form),
/// and the port as written. libcurl refuses what is not a URL — a port that is not 0–65535 in
/// plain digits, spaces in the host, a missing scheme — so none of that is parsed here by hand.
///
/// One shape is read without libcurl, because nearly every origin has it and loading libcurl
/// costs a few milliseconds of a command's start: ``plainOrigin(_:)``, where libcurl's answer is
/// the text itself. A test holds the two readings equal.
package struct URLParts: Equatable {
    package let scheme: String
    package let host: String
    package let port: Int?
    package let hasCredentials: Bool

    package struct Refusal: Error {
        package let reason: String
    }

    package init(_ text: String) throws(Refusal) {
        if let plain = Self.plainOrigin(text) {
            self = plain
        } else {
            try self.init(libcurl: text)
        }
    }

    private init(scheme: String, host: String, port: Int?) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.hasCredentials = false
    }

    /// `text` split when it is a plain origin, `http` or `https` `://` host, then optionally `:`
    /// and a port of one to five digits not starting with `0` (at most 65535), then optionally
    /// `/`, nothing else: the host's labels non-empty, of lower-case ASCII letters, digits and
    /// hyphens, the last starting with a letter (so it cannot be an IPv4 number libcurl would
    /// rewrite). For such text libcurl returns exactly these parts; anything else is `nil`, left
    /// to libcurl.
    static func plainOrigin(_ text: String) -> URLParts? {
        var utf8 = text.utf8[...]
        let scheme: String
        if utf8.starts(with: "https://".utf8) {
            scheme = "https"
            utf8 = utf8.dropFirst(8)
        } else if utf8.starts(with: "http://".utf8) {
            scheme = "http"
            utf8 = utf8.dropFirst(7)
        } else {
            return nil
        }
        if utf8.last == UInt8(ascii: "/") { utf8 = utf8.dropLast() }
        var hostEnd = utf8.endIndex
        var port: Int? = nil
        if let colon = utf8.firstIndex(of: UInt8(ascii: ":")) {
            let digits = utf8[utf8.index(after: colon)...]
            guard (1...5).contains(digits.count), digits.first != UInt8(ascii: "0"),
                  digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
            let value = digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
            guard value <= 65535 else { return nil }
            port = value
            hostEnd = colon
        }
        let host = utf8[..<hostEnd]
        var labelStart = true
        var lastLabelStartsWithLetter = false
        for byte in host {
            let letter = (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            if byte == UInt8(ascii: ".") {
                guard !labelStart else { return nil }  // an empty label
                labelStart = true
                continue
            }
            guard letter || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") else { return nil }
            if labelStart { lastLabelStartsWithLetter = letter }
            labelStart = false
        }
        guard !labelStart, lastLabelStartsWithLetter else { return nil }  // empty, a trailing dot, or a number
        return URLParts(scheme: scheme, host: String(decoding: host, as: UTF8.self), port: port)
    }

    /// `text` split by libcurl, whatever its shape.
    package init(libcurl text: String) throws(Refusal) {
        guard authctl_curl_load() == 1 else {
            throw Refusal(reason: "libcurl could not be loaded: " + (authctl_curl_load_error().map { String(cString: $0) } ?? "unknown"))
        }
        guard let handle = authctl_curl_url() else { throw Refusal(reason: "libcurl could not allocate a URL handle") }
        defer { authctl_curl_url_cleanup(handle) }
        var rc = authctl_curl_url_set(handle, CURLUPART_URL, text, UInt32(CURLU_NON_SUPPORT_SCHEME))
        // An empty port (`https://example.com:`) is a URL without one (URL Standard, port state:
        // an empty buffer leaves the port null). libcurl 7.88 agrees; older ones call it a bad
        // port number, so ask them again without the colon.
        if rc == CURLUE_BAD_PORT_NUMBER, let bare = Self.droppingEmptyPort(text) {
            rc = authctl_curl_url_set(handle, CURLUPART_URL, bare, UInt32(CURLU_NON_SUPPORT_SCHEME))
        }
        guard rc == CURLUE_OK else { throw Refusal(reason: String(cString: authctl_curl_url_strerror(rc))) }
        func part(_ which: CURLUPart) -> String? {
            var value: UnsafeMutablePointer<CChar>? = nil
            guard authctl_curl_url_get(handle, which, &value, 0) == CURLUE_OK, let value else { return nil }
            defer { authctl_curl_free(value) }
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
