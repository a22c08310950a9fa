import Foundation
import Session
import Synchronization

/// `authctl webdriver --upstream URL` (docs/browser.md, "WebDriver's virtual authenticators for
/// any browser"): `authctl serve` in front of a browser's driver. Every WebDriver command goes on
/// to the upstream unchanged, but WebAuthn L3 §11's, which the server's own routes answer
/// (WebDriverRoutes) for the upstream's sessions: each virtual authenticator is an account of
/// its own, and the session's pages get the page bridge of its newest authenticator — through
/// CDP's `Page.addScriptToEvaluateOnNewDocument` for chromedriver, through the user script
/// authctl-webkit reads at each navigation for WebKitWebDriver. New Session's answer says so
/// (`webauthn:virtualAuthenticators`, the extensions authctl supports).
///
/// The server's own routes (`/accounts`, `/bridge.js`, …) stay as `serve` has them, token and all;
/// WebDriver's take none, as a driver's do: the intermediary listens on loopback only.
public final class WebDriverIntermediary: Sendable {
    /// How the session's pages get the bridge.
    enum Injection: Sendable {
        /// chromedriver: CDP's script to evaluate on each new document, by its identifier once added.
        case devTools(installed: String?)
        /// WebKitWebDriver launching authctl-webkit: the file it reads at each navigation, in a
        /// directory of its own.
        case userScript(file: String, directory: String)
        /// Another driver: no way to add a script before a page's own (§11's commands answer
        /// `unsupported operation`).
        case unavailable
    }

    struct UpstreamSession: Sendable {
        var injection: Injection
        /// Its virtual authenticators, oldest first: the pages use the newest's device.
        var authenticators: [String] = []
        /// Its §11 commands, one at a time in the order they came: an authenticator and its
        /// bridge in place before the next command (another session's wait on the upstream
        /// holds none of its own).
        let commands: CommandOrder
    }

    /// A session's §11 commands in turn: each takes a ticket as it arrives and runs, on its own
    /// thread, once the one before it has finished.
    final class CommandOrder: @unchecked Sendable {  // its counts under `condition`
        private let condition = NSCondition()
        private var issued = 0, finished = 0

        func ticket() -> Int {
            condition.lock()
            defer { condition.unlock() }
            issued += 1
            return issued - 1
        }

        func run(_ ticket: Int, _ work: () -> HTTPResponse) -> HTTPResponse {
            condition.lock()
            while finished != ticket { condition.wait() }
            condition.unlock()
            defer {
                condition.lock()
                finished += 1
                condition.broadcast()
                condition.unlock()
            }
            return work()
        }
    }

    let upstream: WebDriverUpstream
    /// authctl-webkit, which WebKitWebDriver launches (`nil`: not found; a WebKitGTK session is refused).
    let webKitBrowser: String?
    /// The URL pages reach the server by (the bridge's `server`), once it listens.
    private let reached = Mutex("")
    private let sessions = Mutex([String: UpstreamSession]())

    /// - Parameters:
    ///   - upstream: the driver's URL, `http://host:port` and any base path (`/wd/hub`).
    ///   - webKitBrowser: authctl-webkit's path.
    public init(upstream: String, webKitBrowser: String?) {
        self.upstream = WebDriverUpstream(url: upstream.hasSuffix("/") ? String(upstream.dropLast()) : upstream)
        self.webKitBrowser = webKitBrowser
    }

    /// The server listens at `url` (`http://127.0.0.1:PORT`): the pages' bridge reaches it there.
    public func listening(at url: String) { reached.withLock { $0 = url } }

    /// Removes the sessions' user-script directories (the server stops).
    public func close() {
        let all = sessions.withLock { held in defer { held = [:] }; return Array(held.values) }
        for session in all { Self.removeDirectory(of: session.injection) }
    }

    /// The answer to `request` when it is WebDriver's (`nil`: one of the server's own routes,
    /// whose first segments `own` lists, answered as `serve` answers it). It comes later, from
    /// another thread: a command waits on the upstream without holding one of the server's.
    func answer(_ request: HTTPRequest, in service: AccountService, own: Set<String>) -> HTTPResponse? {
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        if let first = parts.first, first != "session", own.contains(first) { return nil }
        if let refusal = Self.refusal(request) { return refusal }
        // A command is a path (`*`, an absolute URL or an authority form is none, and would name
        // another server to libcurl): WebDriver's unknown command.
        guard request.path.hasPrefix("/") else {
            return WebDriverUpstream.error(404, "unknown command", .badInput, "a WebDriver command is a path from /, not \(JSONText.shown(request.path))")
        }
        guard !request.bodyTooLarge else {
            return WebDriverUpstream.error(413, "invalid argument", .badInput, "the body is larger than the server accepts (1 MiB)")
        }
        let work: @Sendable () -> HTTPResponse
        switch (request.method, parts.first, parts.count) {
        case ("POST", "session", 1): work = { self.newSession(request, in: service) }
        // Delete Session, with or without a trailing slash (either ends the session upstream).
        case ("DELETE", "session", 2): work = { self.deleteSession(parts[1], request, in: service) }
        case ("DELETE", "session", 3) where parts[2].isEmpty: work = { self.deleteSession(parts[1], request, in: service) }
        case (_, "session", 3...) where parts[2] == "webauthn":
            let command: @Sendable () -> HTTPResponse = { self.authenticatorCommand(request, parts, in: service) }
            if let order = sessions.withLock({ $0[parts[1]]?.commands }) {
                let ticket = order.ticket()
                work = { order.run(ticket, command) }
            } else {
                work = command
            }
        default: work = { self.upstream.send(request.method, request.path, query: request.query, body: Self.body(request)) }
        }
        // A thread of its own: a command may wait on the upstream for minutes (an async script,
        // a page load, an upstream that hangs), and such waits on Dispatch's shared pool, which
        // grows by about one thread a second, held every other command behind them.
        let deferred = HTTPDeferred()
        Thread { deferred.complete(work()) }.start()
        return HTTPResponse(status: 200, contentType: .none, body: [], deferred: deferred)
    }

    /// A WebDriver command a web page sent, refused: one with an `Origin` (a WebDriver client sends
    /// none; a page's fetch or form does), or a `Host` that is not loopback's (a page whose name
    /// was made to resolve to 127.0.0.1). Without the token, and with the driver's own checks of
    /// them left behind here, any page on the machine could otherwise drive the browser.
    private static func refusal(_ request: HTTPRequest) -> HTTPResponse? {
        if request.origin != nil {
            return WebDriverUpstream.error(403, "unknown error", .usage, "a WebDriver command from a page (it carries Origin) is refused")
        }
        if let host = request.host, !isLoopback(host) {
            return WebDriverUpstream.error(403, "unknown error", .usage, "a WebDriver command for host \(JSONText.shown(host)) is refused: the intermediary is reached on loopback")
        }
        return nil
    }

    /// `localhost`, `127.x.y.z` or `[::1]`, with or without a port.
    static func isLoopback(_ host: String) -> Bool {
        var name = Substring(host.lowercased())
        if name.hasPrefix("[") {
            return name.hasPrefix("[::1]") && (name.count == 5 || name.dropFirst(5).first == ":")
        }
        if let colon = name.lastIndex(of: ":") { name = name[..<colon] }
        if name == "localhost" { return true }
        let octets = name.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }

    /// The body sent on: the request's, none for an empty one but POST's (`{}` is WebDriver's no parameters).
    private static func body(_ request: HTTPRequest) -> [UInt8]? {
        request.body.isEmpty && request.method != "POST" ? nil : request.body
    }

    // MARK: - Sessions

    /// New Session: for WebKitGTK, the browser made authctl-webkit with a user script of the
    /// session's own; the upstream's session tracked and its capabilities made §11's. The upstream
    /// gets the capabilities as read here, written anew: a body this JSON parser refuses or reads
    /// otherwise than the driver's (a lone surrogate, a control character in a string, which
    /// WebKitWebDriver takes) would otherwise reach it with a browser of the client's choosing.
    private func newSession(_ request: HTTPRequest, in service: AccountService) -> HTTPResponse {
        guard let body = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any],
              let written = try? JSONSerialization.data(withJSONObject: body, options: [.withoutEscapingSlashes]) else {
            return WebDriverUpstream.error(400, "invalid argument", .badInput, "New Session's body is not a JSON object (RFC 8259, UTF-8)")
        }
        var sent = Array(written)
        var injection: Injection?
        if NewSessionCapabilities.namesWebKitGTK(body) {
            guard let webKitBrowser else {
                return WebDriverUpstream.error(500, "session not created", .usage,
                                               "webkitgtk:browserOptions asks for WebKitGTK, and authctl-webkit was not found: "
                                               + "give --webkit-browser PATH or AUTHCTL_WEBKIT_BROWSER, or install it beside authctl")
            }
            if let why = NewSessionCapabilities.untakenArguments(body) {
                return WebDriverUpstream.error(400, "invalid argument", .badInput,
                                               "webkitgtk:browserOptions.args: authctl-webkit takes --automation, --proxy URL and --ignore-host HOST; \(why)")
            }
            let directory: String
            do { directory = try service.makeDirectory() } catch { return error.response }
            let file = directory + "/user-script.js"
            guard FileManager.default.createFile(atPath: file, contents: Data(), attributes: [.posixPermissions: 0o600]),
                  let rewritten = try? JSONSerialization.data(withJSONObject: NewSessionCapabilities.launchingWebKit(body, browser: webKitBrowser, userScript: file),
                                                              options: [.withoutEscapingSlashes]) else {
                try? FileManager.default.removeItem(atPath: directory)
                return WebDriverUpstream.unknownError("cannot make the session's user script in \(directory)")
            }
            sent = Array(rewritten)
            injection = .userScript(file: file, directory: directory)
        }
        let answer = upstream.send("POST", "/session", body: sent)
        guard answer.status == 200, let json = (try? JSONSerialization.jsonObject(with: Data(answer.body))) as? [String: Any],
              let made = NewSessionCapabilities.answered(json, extensions: NewSession(sessionId: "").capabilities),
              let text = try? JSONSerialization.data(withJSONObject: made.body, options: [.withoutEscapingSlashes]) else {
            if let injection { Self.removeDirectory(of: injection) }
            return answer
        }
        sessions.withLock {
            $0[made.sessionId] = UpstreamSession(injection: injection ?? (made.chromium ? .devTools(installed: nil) : .unavailable),
                                                 commands: CommandOrder())
        }
        service.webDriverSessions.withLock { $0[made.sessionId] = [] }
        return HTTPResponse(status: 200, contentType: .json, body: Array(text))
    }

    /// Delete Session: sent on; once the upstream has ended it (or knows it no more), its
    /// authenticators end too.
    private func deleteSession(_ id: String, _ request: HTTPRequest, in service: AccountService) -> HTTPResponse {
        let answer = upstream.send("DELETE", request.path, body: nil)
        guard answer.status == 200 || answer.status == 404, let ended = sessions.withLock({ $0.removeValue(forKey: id) }) else { return answer }
        _ = service.route(request)  // the server's Delete Session: its authenticators end
        Self.removeDirectory(of: ended.injection)
        return answer
    }

    private static func removeDirectory(of injection: Injection) {
        if case .userScript(_, let directory) = injection { try? FileManager.default.removeItem(atPath: directory) }
    }

    // MARK: - §11

    /// A §11 command, on a session of the upstream's: the server's route answers it; Add and
    /// Remove Virtual Authenticator then give the session's pages the newest one's bridge.
    private func authenticatorCommand(_ request: HTTPRequest, _ parts: [String], in service: AccountService) -> HTTPResponse {
        let id = parts[1]
        guard sessions.withLock({ $0[id] }) != nil else {
            return WebDriverUpstream.error(404, "invalid session id", .usage, "no session \(JSONText.shown(id)) (none the upstream made through this intermediary)")
        }
        let added = request.method == "POST" && parts.count == 4 && parts[3] == "authenticator"
        let removed = request.method == "DELETE" && parts.count == 5 && parts[3] == "authenticator"
        if added, case .unavailable = sessions.withLock({ $0[id]?.injection }) {
            return WebDriverUpstream.error(500, "unsupported operation", .notSupported,
                                           "the upstream's browser takes no script before a page's own: authctl's authenticators reach pages through "
                                           + "chromedriver (CDP) or WebKitWebDriver with webkitgtk:browserOptions (authctl-webkit)")
        }
        let answer = service.route(request)
        guard added || removed, answer.status == 200 else { return answer }
        if added {
            guard let json = (try? JSONSerialization.jsonObject(with: Data(answer.body))) as? [String: Any],
                  let authenticator = json["value"] as? String else { return answer }
            sessions.withLock { $0[id]?.authenticators.append(authenticator) }
            if let failure = inject(session: id, in: service) {
                // Not added after all: the pages could not reach it.
                sessions.withLock { $0[id]?.authenticators.removeAll { $0 == authenticator } }
                _ = service.route(HTTPRequest(method: "DELETE", path: request.path + "/" + authenticator, authorization: nil, body: []))
                _ = inject(session: id, in: service)
                return failure
            }
        } else {
            sessions.withLock { $0[id]?.authenticators.removeAll { $0 == parts[4] } }
            if let failure = inject(session: id, in: service) { return failure }
        }
        return answer
    }

    /// Gives the session's pages the bridge of its newest authenticator (none when it has none):
    /// `nil`, or the failure to answer.
    private func inject(session id: String, in service: AccountService) -> HTTPResponse? {
        guard let tracked = sessions.withLock({ $0[id] }) else { return nil }
        let server = reached.withLock { $0 }
        let script = tracked.authenticators.last.flatMap { service.bridgeScript(server: server, account: $0, device: $0) }
        switch tracked.injection {
        case .devTools(let installed):
            if let installed {
                if case .failure(let failure) = upstream.devTools(id, "Page.removeScriptToEvaluateOnNewDocument", ["identifier": installed]) {
                    return failure.answer
                }
                sessions.withLock { $0[id]?.injection = .devTools(installed: nil) }
            }
            guard let script else { return nil }
            switch upstream.devTools(id, "Page.addScriptToEvaluateOnNewDocument", ["source": script]) {
            case .failure(let failure): return failure.answer
            case .success(let result):
                guard let identifier = result["identifier"] as? String else {
                    return WebDriverUpstream.unknownError("chromedriver answered Page.addScriptToEvaluateOnNewDocument without an identifier")
                }
                sessions.withLock { $0[id]?.injection = .devTools(installed: identifier) }
                return nil
            }
        case .userScript(let file, _):
            // Whole or not at all (authctl-webkit reads it at each navigation), and the owner's
            // alone (mode 0600, as the file was made: the script holds the server's token): a new
            // file beside it, renamed over it.
            let next = file + ".next"
            guard FileManager.default.createFile(atPath: next, contents: Data((script ?? "").utf8), attributes: [.posixPermissions: 0o600]),
                  rename(next, file) == 0 else {
                let reason = String(cString: strerror(errno))
                unlink(next)
                return WebDriverUpstream.unknownError("cannot write the session's user script \(file): \(reason)")
            }
            return nil
        case .unavailable:
            return nil
        }
    }
}
