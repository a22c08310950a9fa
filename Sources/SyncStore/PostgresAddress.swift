/// Where an account store on a PostgreSQL server is: a libpq connection URI
/// (`postgresql://[user[:password]@]host[:port]/database[?parameter=value…]`, or `postgres://`)
/// and, after `#`, the account's name in that database (`default` when there is none) — so one
/// database holds the stores of many accounts, each apart. The fragment is authctl's; libpq gets
/// the URI without it. Anything libpq reads from the environment (`PGPASSWORD`, `PGPASSFILE`,
/// `PGSSLMODE`, …) applies as usual, so a password need not be in the address.
package struct PostgresAddress: Sendable, Equatable, CustomStringConvertible {
    /// What libpq connects with.
    package let conninfo: String
    /// The account's name in the database: 1 to 64 of a-z, 0-9, '.', '_', '-'.
    package let account: String

    /// Whether `text` names a PostgreSQL store (by its scheme) rather than a directory.
    package static func names(_ text: String) -> Bool {
        text.hasPrefix("postgresql://") || text.hasPrefix("postgres://")
    }

    /// Reads `text`; a text that is not a PostgreSQL URI, or whose account name is not one, is
    /// `invalid`.
    package init(_ text: String) throws(StoreError) {
        guard Self.names(text) else {
            throw StoreError(.invalid, "'\(Self.redacted(text))' is not a PostgreSQL address (postgresql://host/database[#account])")
        }
        guard !text.utf8.contains(where: { $0 < 0x21 || $0 == 0x7f }) else {
            throw StoreError(.invalid, "a PostgreSQL address has no spaces or control characters")
        }
        var uri = text, account = "default"
        if let hash = text.firstIndex(of: "#") {
            uri = String(text[..<hash])
            account = String(text[text.index(after: hash)...])
            guard (try? StoreRules.checkKey(account)) != nil else {
                let shown = account.count > 64 ? String(account.prefix(64)) + "…" : account
                throw StoreError(.invalid, "'\(shown)' is not an account name (1 to 64 of a-z, 0-9, '.', '_', '-', after '#')")
            }
        }
        conninfo = uri
        self.account = account
    }

    /// The address as messages show it (``redacted(_:)``).
    package var description: String { Self.redacted(conninfo) + (account == "default" ? "" : "#" + account) }

    /// `text` as messages show it: the password of its `user:password@` part replaced by `***`,
    /// its query's parameters (any of which may be a password, under any spelling libpq reads)
    /// left out as `?…`, and cut to 200 characters.
    package static func redacted(_ text: String) -> String {
        var out = text
        var fragment = ""
        if let hash = out.firstIndex(of: "#") {
            fragment = String(out[hash...])
            out = String(out[..<hash])
        }
        if let question = out.firstIndex(of: "?") { out = String(out[..<question]) + "?…" }
        if let scheme = out.firstRange(of: "://") {
            let rest = out[scheme.upperBound...]
            let authorityEnd = rest.firstIndex(where: { "/?".contains($0) }) ?? rest.endIndex
            if let at = rest[..<authorityEnd].lastIndex(of: "@"), let colon = rest[..<at].firstIndex(of: ":") {
                out.replaceSubrange(out.index(after: colon)..<at, with: "***")
            }
        }
        out += fragment
        return out.count > 200 ? String(out.prefix(200)) + "…" : out
    }

    /// `message` (libpq's, which may echo a part of the address) with every value of the address
    /// that may be a secret — the password after `user:`, the value of every query parameter but
    /// those that never hold one (``plainParameters``: a host, a port, a mode) — replaced by `***`
    /// wherever it stands as a word of its own, as given and percent-decoded: a value is never
    /// cut out of a longer word (a password `rt` leaves `port` alone).
    package func scrub(_ message: String) -> String {
        let parts = Self.parts(conninfo)
        var secrets = parts.password.map { [$0] } ?? []
        for parameter in parts.query where !Self.plainParameters.contains(Self.percentDecoded(parameter.key)) {
            // A pair without '=' is echoed whole ("missing key/value separator"): all of it may be the secret.
            secrets.append(parameter.value ?? parameter.key)
        }
        var out = Array(message)
        let words = Set(secrets.flatMap { [$0, Self.percentDecoded($0)] }.filter { !$0.isEmpty })
        for secret in words.sorted(by: { $0.count > $1.count }) {
            out = Self.replacingWords(Array(secret), in: out)
        }
        let scrubbed = String(out)
        return scrubbed.count > 500 ? String(scrubbed.prefix(500)) + "…" : scrubbed
    }

    /// Whether `text`, an address as given, carries a password: after `user:`, or as a
    /// `password`, `sslpassword` or `dbname` (a connection string of its own) parameter that
    /// holds one. Whatever libpq reads from the environment (`PGPASSWORD`, a password file) is
    /// not part of it.
    package static func carriesPassword(_ text: String) -> Bool {
        let parts = parts(String(text.prefix { $0 != "#" }))
        if let password = parts.password, !password.isEmpty { return true }
        return parts.query.contains { parameter in
            let key = percentDecoded(parameter.key), value = percentDecoded(parameter.value ?? "")
            return ((key == "password" || key == "sslpassword") && !value.isEmpty) || (key == "dbname" && value.contains("password"))
        }
    }

    /// The query parameters whose values are never secret (libpq's keywords for a host, a port,
    /// a timeout, a mode): left as they are in what libpq says.
    static let plainParameters: Set<String> = [
        "host", "hostaddr", "port", "user", "connect_timeout", "client_encoding", "application_name", "fallback_application_name",
        "keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count", "tcp_user_timeout", "sslmode", "sslnegotiation",
        "sslcompression", "sslsni", "sslcertmode", "ssl_min_protocol_version", "ssl_max_protocol_version", "gssencmode", "gssdelegation",
        "channel_binding", "require_auth", "target_session_attrs", "load_balance_hosts", "replication", "requiressl",
    ]

    /// The password after `user:` in `conninfo` (as given), and its query's parameters (key and
    /// value as given; no value without '=').
    private static func parts(_ conninfo: String) -> (password: String?, query: [(key: String, value: String?)]) {
        var rest = Substring(conninfo), query = [(key: String, value: String?)]()
        if let question = rest.firstIndex(of: "?") {
            for pair in rest[rest.index(after: question)...].split(separator: "&") {
                if let equals = pair.firstIndex(of: "=") {
                    query.append((String(pair[..<equals]), String(pair[pair.index(after: equals)...])))
                } else {
                    query.append((String(pair), nil))
                }
            }
            rest = rest[..<question]
        }
        var password: String?
        if let scheme = rest.firstRange(of: "://") {
            let authority = rest[scheme.upperBound...].prefix { $0 != "/" }
            if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
                password = String(authority[authority.index(after: colon)..<at])
            }
        }
        return (password, query)
    }

    /// `text` with every occurrence of `word` that stands on its own replaced by `***`: an end of
    /// `word` that is a letter, a digit or `_` must not touch another such character.
    private static func replacingWords(_ word: [Character], in text: [Character]) -> [Character] {
        func wordy(_ c: Character) -> Bool { c.isLetter || c.isNumber || c == "_" }
        var out = [Character](), i = 0
        out.reserveCapacity(text.count)
        while i < text.count {
            if i + word.count <= text.count, text[i..<(i + word.count)].elementsEqual(word),
               !(wordy(word[0]) && i > 0 && wordy(text[i - 1])),
               !(wordy(word[word.count - 1]) && i + word.count < text.count && wordy(text[i + word.count])) {
                out += ["*", "*", "*"]
                i += word.count
            } else {
                out.append(text[i])
                i += 1
            }
        }
        return out
    }

    private static func percentDecoded(_ text: String) -> String {
        var bytes = [UInt8]()
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "%"), utf8.count >= 2, let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
