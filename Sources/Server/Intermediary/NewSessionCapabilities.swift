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

    /// The options authctl-webkit takes besides `--user-script` (clients/webkit/authctl-webkit.c):
    /// with their value after `=` or as the next argument, but `--automation`.
    static let webKitArguments = ["--automation", "--proxy", "--ignore-host"]

    /// Why a capability set's `webkitgtk:browserOptions.args` is one authctl-webkit would refuse
    /// (`nil`: it takes them). authctl-webkit exits at once on an option it does not take (GTK's
    /// `--gtk-module` among them: code loaded into the browser), and WebKitWebDriver then waits
    /// for it without end: such a New Session is refused before it reaches the driver. A
    /// `--user-script` of the client's is no refusal (it is replaced).
    static func untakenArguments(_ body: [String: Any]) -> String? {
        for set in sets(body) {
            guard let options = set[webKitOptions] as? [String: Any], let given = options["args"] else { continue }
            guard let arguments = given as? [Any] else { return "args is not a list" }
            var index = 0
            while index < arguments.count {
                guard let argument = arguments[index] as? String else { return "an argument is not a string" }
                index += 1
                if argument == "--user-script" { index += 1 }  // and its value
                if argument.hasPrefix("--user-script") { continue }
                let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
                guard webKitArguments.contains(name) else { return "not \(JSONText.shown(argument))" }
                if name != "--automation", !argument.contains("=") {
                    guard index < arguments.count, arguments[index] is String else { return "\(argument) without its value" }
                    index += 1  // its value
                }
            }
        }
        return nil
    }

    /// The request with each capability set that names `webkitgtk:browserOptions` launching
    /// `browser` under automation with `--user-script=userScript`: its other arguments kept, a
    /// `--user-script` of its own dropped, with its value (one file per session, the intermediary's).
    static func launchingWebKit(_ body: [String: Any], browser: String, userScript: String) -> [String: Any] {
        func rewritten(_ set: [String: Any]) -> [String: Any] {
            guard var options = set[webKitOptions] as? [String: Any] else { return set }
            var arguments = [String]()
            var given = ((options["args"] as? [Any]) ?? []).compactMap { $0 as? String }[...]
            while let argument = given.popFirst() {
                if argument == "--user-script" { _ = given.popFirst() }  // and its value
                if !argument.hasPrefix("--user-script") { arguments.append(argument) }
            }
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
