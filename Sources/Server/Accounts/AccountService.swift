import Audit
import Foundation
import Session
import Synchronization

/// What `authctl serve` answers (docs/server.md): the accounts it hosts — each in memory by
/// default, a throw-away vault of its own removed when the account ends — and the routes that
/// reach them, one file per resource under `Routes/`. Every request but `GET /health` and
/// `GET /openapi.json` carries the server's token.
public final class AccountService: @unchecked Sendable {
    private let token: [UInt8]
    /// The token as text, for the page bridge that carries it.
    let tokenText: String
    private let scratch: String
    private let accounts = Mutex([String: HostedAccount]())
    private var router = Router<AccountService>()
    private let closing = Mutex(false)
    /// WebDriver sessions (§11): each a group of virtual authenticators, by account id.
    let webDriverSessions = Mutex([String: Set<String>]())
    /// The attestation CA of every account the server makes (as one manufacturer's CA signs for
    /// all its devices): one trust anchor for a test suite, and no CA to make per account. `nil`
    /// when OpenSSL could not make it; each account then makes its own, or fails as it would.
    let attestationCA = try? AttestationCA.generate()
    /// The audits it runs (`/audits`).
    let audits = AuditJobs()
    /// The browser's driver it stands in front of (`authctl webdriver`), when it does.
    private let intermediary: WebDriverIntermediary?
    /// The first segments of its own routes' paths, which an intermediary answers itself.
    private var ownPaths = Set<String>()

    /// - Parameters:
    ///   - token: what every request but `GET /health` carries as `Authorization: Bearer TOKEN`.
    ///   - scratch: where the accounts' throw-away vaults are made.
    ///   - intermediary: the browser's driver it passes WebDriver's commands on to, answering §11's
    ///     itself (`authctl webdriver`).
    public init(token: String, scratch: String, intermediary: WebDriverIntermediary? = nil) {
        self.token = Array(token.utf8)
        tokenText = token
        self.scratch = scratch
        self.intermediary = intermediary
        router.add("GET", "/health") { _, _ throws(Problem) in .json(200, #"{"status":"ok"}"#) }
        router.add("GET", "/openapi.json") { _, _ throws(Problem) in HTTPResponse(status: 200, contentType: .json, body: OpenAPIDocument.bytes) }
        addAccountRoutes(to: &router)
        addDeviceRoutes(to: &router)
        addCeremonyRoutes(to: &router)
        addPasskeyRoutes(to: &router)
        addSyncRoutes(to: &router)
        addWebDriverRoutes(to: &router)
        addBridgeRoutes(to: &router)
        addAuditRoutes(to: &router)
        ownPaths = Set(router.routes.compactMap { $0.pattern.split(separator: "/").first.map(String.init) })
    }

    /// Each route's body type, by `METHOD /pattern` (for the contract's test): `nil` for a route
    /// that reads no body.
    var routeBodies: [String: (any RequestBodyType.Type)?] {
        Dictionary(router.routes.map { ("\($0.method) \($0.pattern)", $0.body) }, uniquingKeysWith: { a, _ in a })
    }

    /// Serves a vault as one more account, `id`, on the real clock; never removed. `opening` opens
    /// its session with the people the server gives it (``Session/open(at:passphrase:access:verifyingFirst:waiting:people:clock:)``);
    /// `pin` is what the person at each of its devices types (else each request's `pin`). What
    /// the store checks found at opening is answered with the first request (docs/server.md).
    public func host(id: String, pin: String?, opening: (any People) throws(SessionError) -> Session) throws(SessionError) {
        let persons = HostedPeople(pins: [:], clock: nil)
        let session = try opening(persons)
        for name in session.deviceNames { persons.setPIN(pin, device: name) }
        let hosted = HostedAccount(id: id, session: session, persons: persons, directory: nil, storage: "vault")
        accounts.withLock { $0[id] = hosted }
    }

    /// The first step of stopping: no new account, every event stream ended and every pending
    /// conditional sign-in canceled. The streams whose connections are still open, which the
    /// server waits for (libmicrohttpd stops only once no connection waits).
    public func beginStop() -> [HTTPStream] {
        closing.withLock { $0 = true }
        audits.cancelAll()
        return accounts.withLock { Array($0.values) }.flatMap { hosted in
            hosted.autofill.close()
            return hosted.events.close()
        }
    }

    /// Ends every account (its throw-away vault removed), once no request runs.
    public func close() {
        closing.withLock { $0 = true }
        let all = accounts.withLock { held in defer { held = [:] }; return Array(held.values) }
        for hosted in all { _ = hosted.end() }
        audits.end(waitingAtMost: 10)
    }

    /// A comment on every event stream (the server does this every few seconds), so that a
    /// client that left is noticed.
    public func pingStreams() {
        for hosted in accounts.withLock({ Array($0.values) }) { hosted.events.ping() }
    }

    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        if let intermediary, let answer = intermediary.answer(request, in: self, own: ownPaths) { return answer }
        let open = request.method == "GET" && (request.path == "/health" || request.path == "/openapi.json")
        guard open || authorized(request.authorization) else {
            var answer = Problem.unauthorized("the request needs Authorization: Bearer TOKEN (the server's token)").response
            answer.headers = [("WWW-Authenticate", "Bearer")]
            return answer
        }
        guard !request.bodyTooLarge else { return Problem(413, .badInput, "the body is larger than the server accepts (1 MiB)").response }
        // An account that is not there is said before anything about the body.
        let parts = Router<AccountService>.pathSegments(request.path)
        if parts.count > 3, parts[1] == "accounts", accounts.withLock({ $0[String(parts[2])] }) == nil {
            return Problem.notFound("no account \(JSONText.shown(String(parts[2])))").response
        }
        return router.route(request, in: self, segments: parts)
    }

    /// `request` answered by the routes, without the token: WebDriver's commands through an
    /// intermediary, which carry none (as a browser's driver takes none).
    func route(_ request: HTTPRequest) -> HTTPResponse {
        guard !request.bodyTooLarge else { return Problem(413, .badInput, "the body is larger than the server accepts (1 MiB)").response }
        return router.route(request, in: self)
    }

    /// The token compared in constant time.
    private func authorized(_ header: String?) -> Bool {
        guard let header, header.hasPrefix("Bearer ") else { return false }
        let given = Array(header.utf8.dropFirst(7))
        guard given.count == token.count else { return false }
        return zip(given, token).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    // MARK: - Accounts

    func hosted(_ id: String) throws(Problem) -> HostedAccount {
        guard let hosted = accounts.withLock({ $0[id] }) else { throw Problem.notFound("no account \(JSONText.shown(id))") }
        return hosted
    }

    func add(_ hosted: HostedAccount) throws(Problem) {
        try accounts.withLock { held throws(Problem) in
            guard !closing.withLock({ $0 }) else { throw Problem(503, .usage, "the server is stopping") }
            held[hosted.id] = hosted
        }
    }

    func remove(_ id: String) -> HostedAccount? { accounts.withLock { $0.removeValue(forKey: id) } }

    /// A new private directory for an account's vault.
    func makeDirectory() throws(Problem) -> String {
        var template = Array((scratch + "/authctl-serve-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw Problem(500, .ioError, "cannot make an account's directory in \(scratch)") }
        return String(cString: made)
    }

    static func secret(_ text: String) -> SecureBytes {
        var bytes = Array(text.utf8)
        return SecureBytes(consuming: &bytes)
    }

    /// The HTTP status of an error of the table (``Problem/status(of:)``).
    static func status(of name: SessionError.Name) -> Int { Problem.status(of: name) }
}
