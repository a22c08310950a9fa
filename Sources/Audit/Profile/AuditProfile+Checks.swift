import Foundation
import Session

extension AuditProfile {
    /// The profile, or `badInput` naming what is wrong with it, before anything is sent: a path
    /// that could reach another host or is not one request target, a method that is not an HTTP
    /// token (it goes into the request line as written), a predicate that cannot hold, a profile
    /// whose users come from nowhere.
    package func checked() throws(AuditError) -> AuditProfile {
        let requests: [(String, Request?)] = [("signUp", signUp), ("logIn", logIn), ("register.begin", register.begin),
                                              ("register.finish", register.finish), ("signIn.begin", signIn.begin),
                                              ("signIn.finish", signIn.finish), ("discoverableSignIn.begin", discoverableSignIn?.begin),
                                              ("discoverableSignIn.finish", discoverableSignIn?.finish), ("signedIn", signedIn)]
        for case let (name, request?) in requests {
            // RFC 3986: a path and query are visible ASCII; `//` would start an authority, `#` a
            // fragment (never sent: libcurl would drop what follows it), and `%` is followed by
            // two hex digits (RFC 9112 §3.2's request-target holds nothing else).
            guard request.path.hasPrefix("/"), !request.path.hasPrefix("//"),
                  request.path.utf8.allSatisfy({ (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "#") }), Self.isPercentEncoded(request.path),
                  request.path.utf8.count <= 2048 else {
                throw AuditError(.badInput, "the profile's \(name).path is a path on the audited RP (one '/' first, visible ASCII without '#', each '%' two hex digits, at most 2048 bytes), not '\(EchoedInput.words(request.path))'")
            }
            guard Self.isToken(request.method), request.method.utf8.count <= 32 else {
                throw AuditError(.badInput, "the profile's \(name).method is an HTTP method such as GET or POST, not '\(EchoedInput.words(request.method))'")
            }
            for (header, value) in request.headers ?? [:] {
                // RFC 9110 §5.5: a field value is visible ASCII, spaces and tabs — never a line break.
                guard Self.isToken(header), !Self.reservedHeaders.contains(header.lowercased()),
                      value.utf8.allSatisfy({ (0x20...0x7E).contains($0) || $0 == 0x09 }), value.utf8.count <= 4096 else {
                    throw AuditError(.badInput, "the profile's \(name).headers has '\(EchoedInput.words(header))': a header's name is an HTTP token other than Host, Content-Type, Content-Length, Cookie or Transfer-Encoding, and its value visible ASCII (at most 4096 bytes)")
                }
            }
            if request.encoding == .form, let body = request.body, !body.isObject {
                throw AuditError(.badInput, "the profile's \(name).body is sent as a form: it is an object, each member a field")
            }
        }
        for (name, success) in [("success", success), ("signedInSuccess", signedInSuccess)] {
            if let cookie = success.cookie, !Self.isToken(cookie) {
                throw AuditError(.badInput, "the profile's \(name).cookie is a cookie's name (an HTTP token), not '\(EchoedInput.words(cookie))'")
            }
            if success.contains == "" { throw AuditError(.badInput, "the profile's \(name).contains is text the answer holds, not empty") }
        }
        // Without a sign-up, a user comes into being where the registration begins: its body
        // must name the user, or every user would be one and the same nobody.
        if signUp == nil, !(register.begin.body?.names("user") ?? false), !register.begin.path.contains("${user}") {
            throw AuditError(.badInput, "the profile has no signUp, so register.begin's body or path names the user (\"${user}\"), who comes into being there")
        }
        // A discoverable sign-in's user is the one its response's userHandle names: a begin that
        // names one is a username-first sign-in, and its cases would prove nothing.
        if let begin = discoverableSignIn?.begin,
           (begin.body?.names("user") ?? false) || begin.path.contains("${user}") || (begin.headers ?? [:]).values.contains(where: { $0.contains("${user}") }) {
            throw AuditError(.badInput, "the profile's discoverableSignIn.begin names no user (\"${user}\"): the response's userHandle says who signs in")
        }
        return self
    }

    /// Headers the audit writes itself: the RP's host, the body's type and length, the cookie jar.
    static let reservedHeaders: Set<String> = ["host", "content-type", "content-length", "cookie", "transfer-encoding"]

    /// Whether each `%` in `text` starts a percent-encoded octet (RFC 3986 §2.1: two hex digits).
    static func isPercentEncoded(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        let hex = { (c: UInt8) in (0x30...0x39).contains(c) || (0x41...0x46).contains(c) || (0x61...0x66).contains(c) }
        return bytes.indices.allSatisfy { i in bytes[i] != UInt8(ascii: "%") || (i + 2 < bytes.count && hex(bytes[i + 1]) && hex(bytes[i + 2])) }
    }

    /// RFC 9110 §5.6.2: a token is one or more tchar.
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { c in
            (0x30...0x39).contains(c) || (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c) || Array("!#$%&'*+-.^_`|~".utf8).contains(c)
        }
    }

    /// What the profile has not that a case needs: a second session of a user (`logIn`), a look
    /// at whether a browser is signed in (`signedIn`), or a sign-in whose begin names no user
    /// (`discoverableSignIn`).
    enum Lack {
        case logIn, signedIn, discoverableSignIn

        var reason: String {
            switch self {
            case .logIn: "the profile has no logIn: a second session of the same user cannot be had"
            case .signedIn: "the profile has no signedIn: whether the browser is signed in cannot be asked"
            case .discoverableSignIn: "the profile has no discoverableSignIn: a sign-in whose begin names no user cannot be had"
            }
        }
    }
}

extension AuditProfile.Success {
    /// Whether an answer is this yes: a 2xx, and each predicate given holds.
    func holds(status: Int, json: JSONValue?, text: String, setCookies: [String]) -> Bool {
        guard (200..<300).contains(status) else { return false }
        if let member, json?.member(member) != (equals ?? .bool(true)) { return false }
        if let cookie, !setCookies.contains(where: { Self.sets(cookie, $0) }) { return false }
        if let contains, !text.contains(contains) { return false }
        return true
    }

    /// Whether the `Set-Cookie` value `header` sets the cookie `name` (RFC 6265 §5.2): its name, a
    /// value, and neither a Max-Age nor an Expires that removes it at once (as a logout clears one).
    static func sets(_ name: String, _ header: String) -> Bool {
        let parts = header.split(separator: ";", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard let pair = parts.first, let equal = pair.firstIndex(of: "="), pair[..<equal] == name,
              !pair[pair.index(after: equal)...].trimmingCharacters(in: CharacterSet(charactersIn: "\"")).isEmpty else { return false }
        for attribute in parts.dropFirst() {
            let (key, value) = attribute.firstIndex(of: "=").map { (attribute[..<$0].lowercased(), String(attribute[attribute.index(after: $0)...])) }
                ?? (attribute.lowercased(), "")
            // §5.2.2: a Max-Age of zero or less expires the cookie (and wins over Expires).
            if key == "max-age", let seconds = Int(value.trimmingCharacters(in: .whitespaces)) { return seconds > 0 }
            if key == "expires", let date = Self.cookieDate(value), date <= Date() { return false }
        }
        return true
    }

    /// An Expires date in the forms servers send (RFC 9110's IMF-fixdate, RFC 850's, asctime).
    static func cookieDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE, dd-MMM-yyyy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: text.trimmingCharacters(in: .whitespaces)) { return date }
        }
        return nil
    }
}

extension JSONValue {
    var isObject: Bool {
        if case .object = self { return true }
        return false
    }

    /// Whether `${name}` stands somewhere in the value (at any depth, or as the value itself).
    func names(_ name: String) -> Bool {
        switch self {
        case .string(let text): text == "${\(name)}"
        case .array(let items): items.contains { $0.names(name) }
        case .object(let members): members.values.contains { $0.names(name) }
        default: false
        }
    }
}
