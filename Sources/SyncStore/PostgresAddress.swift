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

    /// `message` (libpq's, which may echo a part of the address) with every secret the address
    /// carries — the password after `user:`, every query parameter's value — replaced by `***`,
    /// as given and percent-decoded.
    package func scrub(_ message: String) -> String {
        var secrets = [String]()
        var rest = conninfo
        if let question = rest.firstIndex(of: "?") {
            for pair in rest[rest.index(after: question)...].split(separator: "&") {
                if let equals = pair.firstIndex(of: "=") { secrets.append(String(pair[pair.index(after: equals)...])) }
            }
            rest = String(rest[..<question])
        }
        if let scheme = rest.firstRange(of: "://") {
            let authority = rest[scheme.upperBound...].prefix { $0 != "/" }
            if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
                secrets.append(String(authority[authority.index(after: colon)..<at]))
            }
        }
        var out = message
        for secret in secrets.flatMap({ [$0, Self.percentDecoded($0)] }) where !secret.isEmpty {
            out = out.replacing(secret, with: "***")
        }
        return out.count > 500 ? String(out.prefix(500)) + "…" : out
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
