/// An entry of the Associated Domains entitlement (`com.apple.developer.associated-domains`) that
/// cannot be one: what Xcode's Signing & Capabilities would not sign, said before any request.
public struct AssociatedDomainsError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}

/// The app's Associated Domains entitlement as written in its `.entitlements` file:
/// `<service>:<fully qualified domain>[?mode=<alternate mode>]`, a domain prefixed `*.` for all its
/// subdomains (Apple, "Supporting associated domains"; "Configuring an associated domain").
/// Passkeys use the `webcredentials` entries; the others are kept as written.
public struct AssociatedDomainsEntitlement: Sendable, Equatable {
    /// The services an entry names (the entitlement's documentation lists these four).
    public enum Service: String, Sendable, CaseIterable {
        case webcredentials, applinks, activitycontinuation, appclips
    }

    /// `?mode=`: where the domain's file comes from instead of Apple's CDN, and on which devices
    /// the entry counts at all.
    public enum AlternateMode: String, Sendable, CaseIterable {
        /// Devices in developer mode with Associated Domains Development on, for an app signed for
        /// development: the file straight from the server, whose certificate need not be trusted.
        case developer
        /// Devices managed by MDM with the administrator's consent: the file straight from the server.
        case managed
        /// Devices in both modes at once.
        case developerAndManaged = "developer+managed"
    }

    public struct Entry: Sendable, Equatable {
        /// The entry as written.
        public let text: String
        public let service: Service
        /// The domain, lower-cased, without its `*.`.
        public let domain: String
        /// `*.domain`: every subdomain of `domain` (not `domain` itself).
        public let wildcard: Bool
        public let mode: AlternateMode?

        /// Whether the entry names `host` (lower-case): the domain itself, or for a wildcard any
        /// name below it.
        func names(_ host: String) -> Bool {
            wildcard ? host.hasSuffix("." + domain) : host == domain
        }

        /// Whether a device in these modes takes the entry into account.
        func counts(developerMode: Bool, managed: Bool) -> Bool {
            switch mode {
            case nil: true
            case .developer: developerMode
            case .managed: managed
            case .developerAndManaged: developerMode && managed
            }
        }
    }

    public let entries: [Entry]

    /// The entries as an app's entitlements list them; one that is not an entry is refused,
    /// naming it.
    public init(_ entries: [String]) throws(AssociatedDomainsError) {
        var parsed = [Entry]()
        for text in entries { parsed.append(try Self.entry(text)) }
        self.entries = parsed
    }

    init(entries: [Entry]) {
        self.entries = entries
    }

    /// The `webcredentials` entry that decides for `rpID` on a device in these modes: of those
    /// that name it, the longest ("domain matching is based on the longest substring"), so a
    /// domain's own entry wins over a wildcard above it. `nil`: the app is not associated with it.
    func webCredentialsEntry(for rpID: String, developerMode: Bool, managed: Bool) -> Entry? {
        let host = rpID.lowercased()
        return entries.filter { $0.service == .webcredentials && $0.counts(developerMode: developerMode, managed: managed) && $0.names(host) }
            .max { $0.domain.count < $1.domain.count }
    }

    private static func entry(_ text: String) throws(AssociatedDomainsError) -> Entry {
        let shown = text.count > 80 ? String(text.prefix(80)) + "…" : text
        func refused(_ why: String) -> AssociatedDomainsError {
            AssociatedDomainsError("the associated domain '\(shown)' \(why) (written <service>:<fully qualified domain>[?mode=developer|managed|developer+managed])")
        }
        guard let colon = text.firstIndex(of: ":") else { throw refused("names no service") }
        guard let service = Service(rawValue: String(text[..<colon])) else {
            throw refused("names no service of \(Service.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var rest = Substring(text[text.index(after: colon)...])
        var mode: AlternateMode?
        if let question = rest.firstIndex(of: "?") {
            let query = rest[rest.index(after: question)...]
            guard query.hasPrefix("mode="), let named = AlternateMode(rawValue: String(query.dropFirst(5))) else {
                throw refused("has a query that is not a mode")
            }
            mode = named
            rest = rest[..<question]
        }
        let wildcard = rest.hasPrefix("*.")
        if wildcard {
            guard service != .appclips else { throw refused("is a wildcard, which appclips does not take") }
            rest = rest.dropFirst(2)
        }
        // A fully qualified domain and nothing else: no scheme, path, port or trailing dot
        // (TN3155: "Domains in your applinks can't contain a port number").
        let domain = rest.lowercased()
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        let letters = Set("abcdefghijklmnopqrstuvwxyz0123456789-")
        guard !domain.isEmpty, domain.count <= 253, labels.count >= 2,
              labels.allSatisfy({ !$0.isEmpty && $0.count <= 63 && $0.allSatisfy(letters.contains) && $0.first != "-" && $0.last != "-" })
        else { throw refused("has no fully qualified domain (no scheme, path, port or trailing dot)") }
        return Entry(text: text, service: service, domain: domain, wildcard: wildcard, mode: mode)
    }
}
