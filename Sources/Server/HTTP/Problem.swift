import Foundation
import Session

/// A failure as the server answers it: `application/problem+json` (RFC 9457) with `type`,
/// `title` and `name` (the row of docs/errors.md), `status`, `detail`, and, for the rows that
/// have them, `domException` and `ctapStatus`. Written from typed fields — the row is a
/// `SessionError.Name`, never a string — and only when it is answered (``response``).
struct Problem: Error {
    /// What failed: a row of the error table, or a request without the server's token (the one
    /// problem the request layer has no row for: it never sees such a request).
    enum Name: Sendable, Equatable {
        case row(SessionError.Name)
        case unauthorized

        var text: String {
            switch self {
            case .row(let name): name.rawValue
            case .unauthorized: "unauthorized"
            }
        }
    }

    var status: Int
    let name: Name
    let detail: String
    /// What a page meets in its place (the DOMException the browser rejects with).
    let domException: String?
    let ctapStatus: UInt8?
    /// WebDriver's error (`value.error`), on WebDriver's routes (WebAuthn L3 §11).
    var webDriverError: String?

    /// A failure of the request layer: its row's status (``status(of:)``), DOMException and CTAP
    /// status.
    init(_ error: SessionError, status: Int? = nil) {
        self.status = status ?? Self.status(of: error.name)
        name = .row(error.name)
        detail = error.message
        domException = error.name.domException
        ctapStatus = error.name.ctapStatus
    }

    /// A failure the server finds itself, under a row of the table; `domException` when a page
    /// meets it as one (what the browser rejects with in its place).
    init(_ status: Int, _ name: SessionError.Name, _ detail: String, domException: String? = nil) {
        self.init(status: status, name: .row(name), detail: detail, domException: domException)
    }

    private init(status: Int, name: Name, detail: String, domException: String?) {
        self.status = status
        self.name = name
        self.detail = detail
        self.domException = domException
        ctapStatus = nil
    }

    /// No `Authorization: Bearer` header, or another token: `401`.
    static func unauthorized(_ detail: String) -> Problem { Problem(status: 401, name: .unauthorized, detail: detail, domException: nil) }

    /// The request's own mistake in its body or query: `400 badInput`.
    static func input(_ detail: String) -> Problem { Problem(400, .badInput, detail) }

    /// What the path names is not there: `404`, under the row the request layer would give.
    static func notFound(_ detail: String, name: SessionError.Name = .usage) -> Problem { Problem(404, name, detail) }

    /// The answer: `type`, `title`, `status`, `detail`, `name`, then `domException` and
    /// `ctapStatus` where there are, and WebDriver's `value` on its routes.
    var response: HTTPResponse {
        var fields = [#""type":"about:blank""#, #""title":\#(JSONText.quoted(name.text))"#, #""status":\#(status)"#,
                      #""detail":\#(JSONText.quoted(detail))"#, #""name":\#(JSONText.quoted(name.text))"#]
        if let domException { fields.append(#""domException":\#(JSONText.quoted(domException))"#) }
        if let ctapStatus { fields.append(#""ctapStatus":\#(ctapStatus)"#) }
        if let webDriverError {
            fields.append(#""value":{"error":\#(JSONText.quoted(webDriverError)),"message":\#(JSONText.quoted(detail)),"stacktrace":""}"#)
        }
        return HTTPResponse(status: status, contentType: .problem, body: Array("{\(fields.joined(separator: ","))}".utf8))
    }

    /// The HTTP status of an error of the table: the caller's mistakes 400 (a wrong passphrase is
    /// one: the only passphrases a request carries are its own, an export's or an import's), a
    /// ceremony's outcome 422 (never 5xx), a busy vault 409, an account store that cannot be used
    /// 422 too (the request names it, in `POST /accounts`: it is understood, and cannot be done on
    /// that store; never 5xx, which would say the server failed), the rest 500.
    static func status(of name: SessionError.Name) -> Int {
        switch name {
        case .badInput, .syntaxError, .encodingError, .usage, .vaultLocked: 400
        case .canceled, .failed, .invalidResponse, .notHandled, .notInteractive, .matchedExcludedCredential, .biometryLockout, .timedOut,
             .securityError, .notSupported, .passkeysNotSupported, .storeUnavailable: 422
        case .vaultBusy, .vaultExists: 409
        case .unknown, .vaultCorrupted, .vaultNotFound, .vaultInsecure, .scenarioFailed, .ioError, .vaultTooNew: 500
        // What an audit over HTTP ends in (it answers its report; these never end a request).
        case .auditFindings, .rpUnusable: 422
        }
    }
}

/// Runs a call of the request layer, its error as a problem.
func session<T>(_ call: () throws(SessionError) -> T) throws(Problem) -> T {
    do { return try call() } catch { throw Problem(error) }
}

/// JSON text written by hand, for answers too small for an encoder.
enum JSONText {
    static func quoted(_ text: String) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])) ?? Data("[\"\"]".utf8)
        return String(decoding: data.dropFirst().dropLast(), as: UTF8.self)
    }

    /// A path or id as a message shows it: cut short, control characters escaped.
    static func shown(_ text: String) -> String { EchoedInput.text(text) }
}

extension HTTPResponse {
    /// `value` as JSON (sorted keys, slashes unescaped).
    static func encoded(_ status: Int, _ value: some Encodable) -> HTTPResponse {
        HTTPResponse(status: status, contentType: .json, body: Array(JSONOutput.string(value).utf8))
    }

    static let noContent = HTTPResponse(status: 204, contentType: .none, body: [])

    /// A ceremony's answer: its response JSON, and what the browser accepted but the RP should fix
    /// (an empty challenge, …) as its first warnings, which the command line says on stderr and a
    /// scenario in its step's `warnings`.
    static func ceremony(_ response: CeremonyResponse) -> HTTPResponse {
        var answer = HTTPResponse.json(200, response.json)
        answer.warnings = response.warnings
        return answer
    }

    /// This answer with its own ``warnings`` and then `found` (what the store checks found while it
    /// was made: ``Session/takeWarnings()``) as a `warnings` member, when it is a JSON object; any
    /// other answer as it is, its warnings left to no one (a problem says what failed, a 204 has
    /// no body to carry them).
    func warning(_ found: [String]) -> HTTPResponse {
        let warnings = self.warnings + found.filter { !self.warnings.contains($0) }
        guard !warnings.isEmpty, contentType == .json, let close = body.lastIndex(where: { ![0x20, 0x0a, 0x0d, 0x09].contains($0) }),
              body[close] == UInt8(ascii: "}"), let open = body.firstIndex(where: { ![0x20, 0x0a, 0x0d, 0x09].contains($0) }),
              body[open] == UInt8(ascii: "{") else { return self }
        let empty = !body[(open + 1)..<close].contains { ![0x20, 0x0a, 0x0d, 0x09].contains($0) }
        let member = (empty ? "" : ",") + "\"warnings\":[" + warnings.map(JSONText.quoted).joined(separator: ",") + "]"
        var answer = self
        answer.body.insert(contentsOf: Array(member.utf8), at: close)
        return answer
    }
}
