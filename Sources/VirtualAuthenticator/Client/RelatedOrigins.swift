import Curl
import Foundation

/// Related origin requests (WebAuthn L3 §5.11): an origin may use an RP ID it is not a suffix of
/// when the RP's `https://RPID/.well-known/webauthn` lists it, within the first five registrable
/// origin labels (Chrome's limit).
public enum RelatedOrigins {
    /// Where the `.well-known/webauthn` document comes from.
    public enum Source: Sendable, Equatable {
        /// The document itself (a local file's bytes).
        case document([UInt8])
        /// Fetched from this URL (a test server's).
        case url(String)
        /// Fetched from `https://RPID/.well-known/webauthn`, as a browser fetches it.
        case wellKnown
    }

    /// The most registrable origin labels a browser considers (Chrome: 5).
    package static let maxLabels = 5
    /// The largest document read.
    static let documentLimit = 256 << 10

    /// The RP ID rule with related origins (§5.1.3 step 8, §5.1.10): `rpId` checked against
    /// `origin`; one that is not a registrable suffix of it may still be allowed by the RP's
    /// related origins document, when `source` gives one. The suffix list is asked for only when
    /// the RP ID differs from the origin's host.
    package static func validate(_ rpId: String?, for origin: Origin, source: Source?,
                                suffixes: @autoclosure () -> PublicSuffixList) throws(AuthenticatorError) -> String {
        do {
            return try RelyingPartyIdentifier.validate(rpId, for: origin, suffixes: suffixes())
        } catch where error.code == .securityError && source != nil && rpId != nil {
            // As given, like any RP ID: a lower-case ASCII domain that is not a public suffix.
            let candidate = rpId!
            let suffixes = suffixes()
            guard Origin.isDomain(candidate), !suffixes.isPublicSuffix(candidate) else { throw error }
            try permits(origin, rpId: candidate, source: source!, suffixes: suffixes)
            return candidate
        }
    }

    /// Whether `origin` may use `rpId` by the document `source` gives (§5.11.1), else why not.
    static func permits(_ origin: Origin, rpId: String, source: Source, suffixes: PublicSuffixList) throws(AuthenticatorError) {
        let bytes = try document(source, rpId: rpId)
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
              let list = object["origins"] as? [Any] else {
            throw AuthenticatorError(.securityError, "the RP's .well-known/webauthn is not {\"origins\": [...]} JSON")
        }
        // Members that are not strings are skipped, as a URL that does not parse is.
        guard allowed(origin, by: list.compactMap { $0 as? String }, suffixes: suffixes) else {
            throw AuthenticatorError(.securityError,
                "rp id '\(EchoedInput.text(rpId))' is not a suffix of \(origin.serialized), and its .well-known/webauthn does not list that origin among its first \(maxLabels) labels")
        }
    }

    /// §5.11.1 "Validating Related Origins", step by step. Each entry goes through the URL parser
    /// (leading and trailing white space trimmed, tabs and newlines removed, as the URL Standard
    /// does), not through the secure-context rules a caller's origin must meet: an `http://` entry
    /// still takes up one of the labels.
    static func allowed(_ caller: Origin, by origins: [String], suffixes: PublicSuffixList) -> Bool {
        var labelsSeen = [String]()
        for item in origins {
            guard let url = Entry(item) else { continue }
            let label = registrableLabel(url.host, suffixes: suffixes)
            guard !label.isEmpty else { continue }
            if labelsSeen.count >= maxLabels && !labelsSeen.contains(label) { continue }
            if url.scheme == caller.scheme && url.host == caller.host && url.port == caller.port { return true }
            if labelsSeen.count < maxLabels && !labelsSeen.contains(label) { labelsSeen.append(label) }
        }
        return false
    }

    /// One entry of the document, as the URL parser reads it: scheme, ASCII host, port (the
    /// scheme's default dropped).
    struct Entry {
        let scheme: String, host: String, port: Int?

        init?(_ text: String) {
            let trimmed = String(String.UnicodeScalarView(text.unicodeScalars.filter { $0 != "\t" && $0 != "\n" && $0 != "\r" }))
                .trimmingCharacters(in: .whitespaces)
            guard let parts = try? URLParts(trimmed), !parts.host.isEmpty else { return nil }
            let host = (try? Origin.domainToASCII(parts.host, what: "origin host")) ?? parts.host.lowercased()
            guard !Origin.isIPAddress(host) else { return nil }  // an IP address has no registrable label
            scheme = parts.scheme
            self.host = host
            let defaultPort = parts.scheme == "https" ? 443 : parts.scheme == "http" ? 80 : nil
            port = parts.port == defaultPort ? nil : parts.port
        }
    }

    /// The registrable origin label of `host`: the label just before its public suffix
    /// (`example` for `login.example.co.uk`); empty when the host is itself a public suffix.
    static func registrableLabel(_ host: String, suffixes: PublicSuffixList) -> String {
        let suffix = suffixes.publicSuffix(of: host)
        guard host.count > suffix.count, host.hasSuffix("." + suffix) else { return "" }
        let rest = host.dropLast(suffix.count + 1)
        return String(rest.split(separator: ".").last ?? "")
    }

    private static func document(_ source: Source, rpId: String) throws(AuthenticatorError) -> [UInt8] {
        let url: String
        switch source {
        case .document(let bytes): return bytes
        case .url(let given): url = given
        case .wellKnown: url = "https://\(rpId)/.well-known/webauthn"
        }
        do {
            let client = try HTTPClient()
            let response = try client.send(method: "GET", url: url, body: nil, timeoutSeconds: 10)
            guard response.status == 200 else {
                throw AuthenticatorError(.securityError, "fetching \(EchoedInput.text(url)) for related origins answered HTTP \(response.status)")
            }
            guard response.body.count <= documentLimit else {
                throw AuthenticatorError(.securityError, "the related origins document at \(EchoedInput.text(url)) is larger than \(documentLimit) bytes")
            }
            return response.body
        } catch let failure as HTTPClient.Failure {
            throw AuthenticatorError(.securityError, "cannot fetch \(EchoedInput.text(url)) for related origins: \(failure.reason)")
        } catch let error as AuthenticatorError {
            throw error
        } catch {
            throw AuthenticatorError(.securityError, "cannot fetch \(EchoedInput.text(url)) for related origins")
        }
    }
}
