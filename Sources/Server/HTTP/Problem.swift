import Foundation
import Session
import VirtualAuthenticator

/// A failure as the server answers it: `application/problem+json` (RFC 9457) with `type`,
/// `title` and `name` (the row of docs/errors.md), `status`, `detail`, and, for the rows that
/// have them, `domException` and `ctapStatus`.
struct Problem: Error {
    let response: HTTPResponse

    init(_ response: HTTPResponse) { self.response = response }

    /// A failure of the request layer: its row's status (``status(of:)``).
    init(_ error: SessionError, status: Int? = nil) {
        let status = status ?? Self.status(of: error.name)
        var fields = [#""type":"about:blank""#, #""title":\#(JSONText.quoted(error.name.rawValue))"#, #""status":\#(status)"#,
                      #""detail":\#(JSONText.quoted(error.message))"#, #""name":\#(JSONText.quoted(error.name.rawValue))"#,
                      #""domException":\#(JSONText.quoted(error.name.domException))"#]
        if let ctap = error.name.ctapStatus { fields.append(#""ctapStatus":\#(ctap)"#) }
        response = HTTPResponse(status: status, contentType: .problem, body: Array("{\(fields.joined(separator: ","))}".utf8))
    }

    /// A failure the server finds itself: `name` is a row of the table, or `unauthorized`;
    /// `domException` when a page meets it as one (what the browser rejects with in its place).
    init(_ status: Int, _ name: String, _ detail: String, domException: String? = nil) {
        let dom = domException.map { #","domException":\#(JSONText.quoted($0))"# } ?? ""
        let body = #"{"type":"about:blank","title":\#(JSONText.quoted(name)),"status":\#(status),"detail":\#(JSONText.quoted(detail)),"name":\#(JSONText.quoted(name))\#(dom)}"#
        response = HTTPResponse(status: status, contentType: .problem, body: Array(body.utf8))
    }

    /// The request's own mistake in its body or query: `400 badInput`.
    static func input(_ detail: String) -> Problem { Problem(400, SessionError.Name.badInput.rawValue, detail) }

    /// What the path names is not there: `404`, under the row the request layer would give.
    static func notFound(_ detail: String, name: SessionError.Name = .usage) -> Problem { Problem(404, name.rawValue, detail) }

    /// The HTTP status of an error of the table: the caller's mistakes 400 (a wrong passphrase is
    /// one: the only passphrases a request carries are its own, an export's or an import's), a
    /// ceremony's outcome 422 (never 5xx), a busy vault 409, the rest 500.
    static func status(of name: SessionError.Name) -> Int {
        switch name {
        case .badInput, .syntaxError, .encodingError, .usage, .vaultLocked: 400
        case .canceled, .failed, .invalidResponse, .notHandled, .notInteractive, .matchedExcludedCredential, .biometryLockout, .timedOut,
             .securityError, .notSupported, .passkeysNotSupported: 422
        case .vaultBusy, .vaultExists: 409
        case .unknown, .vaultCorrupted, .vaultNotFound, .vaultInsecure, .scenarioFailed, .ioError, .vaultTooNew: 500
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
}
