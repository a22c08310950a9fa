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
                throw StoreError(.invalid, "'\(account)' is not an account name (1 to 64 of a-z, 0-9, '.', '_', '-', after '#')")
            }
        }
        conninfo = uri
        self.account = account
    }

    /// The address with any password replaced by `***`: what messages show.
    package var description: String { Self.redacted(conninfo) + (account == "default" ? "" : "#" + account) }

    /// `text` with the password of its `user:password@` part, and any `password=` parameter,
    /// replaced by `***`.
    package static func redacted(_ text: String) -> String {
        var out = text
        if let scheme = out.firstRange(of: "://") {
            let rest = out[scheme.upperBound...]
            let authorityEnd = rest.firstIndex(where: { "/?#".contains($0) }) ?? rest.endIndex
            if let at = rest[..<authorityEnd].lastIndex(of: "@"), let colon = rest[..<at].firstIndex(of: ":") {
                out.replaceSubrange(out.index(after: colon)..<at, with: "***")
            }
        }
        if let range = out.firstRange(of: "password=") {
            let end = out[range.upperBound...].firstIndex(where: { "&#".contains($0) }) ?? out.endIndex
            out.replaceSubrange(range.upperBound..<end, with: "***")
        }
        return out
    }
}
