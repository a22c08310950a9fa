import Foundation

/// What the intermediary changes in WebDriver's New Session: the request, for WebKitGTK, so that
/// WebKitWebDriver launches authctl-webkit with the session's user script; the answer, so that
/// its capabilities say what authctl's virtual authenticators do (WebAuthn L3 §11.2) instead of
/// what the browser's own would. Pure: JSON in, JSON out.
enum NewSessionCapabilities {
    /// WebKitGTK's browser capability (WebKitWebDriver's `webkitgtk:browserOptions`).
    static let webKitOptions = "webkitgtk:browserOptions"

    /// The capability sets of a New Session body: `alwaysMatch`, then each of `firstMatch`.
    private static func sets(_ body: [String: Any]) -> [[String: Any]] {
        guard let capabilities = body["capabilities"] as? [String: Any] else { return [] }
        let always = (capabilities["alwaysMatch"] as? [String: Any]).map { [$0] } ?? []
        return always + ((capabilities["firstMatch"] as? [Any])?.compactMap { $0 as? [String: Any] } ?? [])
    }

    /// Whether the request asks for a WebKitGTK browser: some capability set names
    /// `webkitgtk:browserOptions`.
    static func namesWebKitGTK(_ body: [String: Any]) -> Bool {
        sets(body).contains { $0[webKitOptions] != nil }
    }

    /// The request with each capability set that names `webkitgtk:browserOptions` launching
    /// `browser` under automation with `--user-script=userScript`: its other arguments kept, a
    /// `--user-script` of its own dropped (one file per session, the intermediary's).
    static func launchingWebKit(_ body: [String: Any], browser: String, userScript: String) -> [String: Any] {
        func rewritten(_ set: [String: Any]) -> [String: Any] {
            guard var options = set[webKitOptions] as? [String: Any] else { return set }
            var arguments = ((options["args"] as? [Any]) ?? []).compactMap { $0 as? String }.filter { !$0.hasPrefix("--user-script") }
            if !arguments.contains("--automation") { arguments.insert("--automation", at: 0) }
            options["binary"] = browser
            options["args"] = arguments + ["--user-script=" + userScript]
            var set = set
            set[webKitOptions] = options
            return set
        }
        guard var capabilities = body["capabilities"] as? [String: Any] else { return body }
        if let always = capabilities["alwaysMatch"] as? [String: Any] { capabilities["alwaysMatch"] = rewritten(always) }
        if let first = capabilities["firstMatch"] as? [Any] {
            capabilities["firstMatch"] = first.map { ($0 as? [String: Any]).map(rewritten) ?? $0 }
        }
        var body = body
        body["capabilities"] = capabilities
        return body
    }

    /// A New Session answer that made a session: its id, whether the browser is Chromium's
    /// (chromedriver's `goog:chromeOptions` among its capabilities: CDP reaches its pages), and
    /// the answer with §11's capabilities — `webauthn:virtualAuthenticators` and the extensions
    /// authctl's authenticators support — in place of the browser's own `webauthn:` ones.
    static func answered(_ body: [String: Any], extensions: [String: Bool]) -> (sessionId: String, chromium: Bool, body: [String: Any])? {
        guard var value = body["value"] as? [String: Any], let id = value["sessionId"] as? String, !id.isEmpty,
              var capabilities = value["capabilities"] as? [String: Any] else { return nil }
        let chromium = capabilities["goog:chromeOptions"] != nil
        for name in capabilities.keys where name.hasPrefix("webauthn:") { capabilities.removeValue(forKey: name) }
        for (name, supported) in extensions { capabilities[name] = supported }
        value["capabilities"] = capabilities
        var body = body
        body["value"] = value
        return (id, chromium, body)
    }
}
