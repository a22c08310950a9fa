import Curl
import Foundation
import Session

/// The browser's driver the intermediary stands in front of (chromedriver, WebKitWebDriver): each
/// command sent on as it came — method, path, query, JSON body — and its answer handed back as
/// it came — status and JSON body (WebDriver's commands are requests and answers of JSON, RFC
/// 9112 with nothing streamed). An upstream that does not answer, or answers what is not
/// WebDriver's JSON, is WebDriver's `unknown error` naming it, never a bare 5xx.
struct WebDriverUpstream: Sendable {
    /// `http://host:port` and any base path, without a final `/`.
    let url: String

    /// The longest a command may take: a page load's or a script's own timeout is the driver's
    /// (300 s and 30 s by default), and a client may set them longer.
    static let timeoutSeconds = 900
    /// The largest answer taken (a full-page screenshot is a few MiB of base64).
    static let replyLimit = 64 << 20

    /// `method` `path` (with `query`) sent on with `body` (`nil`: none); the upstream's answer.
    func send(_ method: String, _ path: String, query: String = "", body: [UInt8]?) -> HTTPResponse {
        // The server hands routes the path percent-decoded: encoded again for the upstream (a
        // cookie's name, an element id), so that none of its bytes ends the path or the URL.
        let encoded = path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? path
        let target = url + encoded + (query.isEmpty ? "" : "?" + query)
        let reply: HTTPClient.Response
        do {
            let client = try HTTPClient()  // one per command: commands of several sessions run at once
            reply = try client.send(method: method, url: target, body: body, timeoutSeconds: Self.timeoutSeconds, replyLimit: Self.replyLimit)
        } catch {
            return Self.unknownError("the upstream WebDriver at \(url) did not answer \(method) \(JSONText.shown(path)): \(error.reason)")
        }
        guard let json = (try? JSONSerialization.jsonObject(with: Data(reply.body))) as? [String: Any], let value = json["value"] else {
            return Self.unknownError("the upstream WebDriver at \(url) answered \(method) \(JSONText.shown(path)) with \(reply.status) and "
                                     + (reply.body.isEmpty ? "no body" : "a body that is not a JSON object with a value") + ", not a WebDriver answer")
        }
        // Passed on as it came but for what no client could take for WebDriver's: a status
        // outside HTTP's (RFC 9110 §15: 100 to 599), a server error without WebDriver's error code.
        guard (200...599).contains(reply.status), reply.status < 500 || ((value as? [String: Any])?["error"] as? String) != nil else {
            return Self.unknownError("the upstream WebDriver at \(url) answered \(method) \(JSONText.shown(path)) with \(reply.status) "
                                     + "and no WebDriver error, not a WebDriver answer")
        }
        return HTTPResponse(status: reply.status, contentType: .json, body: reply.body)
    }

    /// A Chrome DevTools Protocol command on the session's page, through chromedriver's
    /// `goog/cdp/execute`: its result, or the answer that says why there is none.
    func devTools(_ session: String, _ command: String, _ parameters: [String: Any]) -> Result<[String: Any], HTTPFailure> {
        let request: [String: Any] = ["cmd": command, "params": parameters]
        guard let body = try? JSONSerialization.data(withJSONObject: request, options: [.withoutEscapingSlashes]) else {
            return .failure(HTTPFailure(Self.unknownError("\(command): parameters that are not JSON")))
        }
        let answer = send("POST", "/session/\(session)/goog/cdp/execute", body: Array(body))
        guard answer.status == 200, let json = (try? JSONSerialization.jsonObject(with: Data(answer.body))) as? [String: Any],
              let result = json["value"] as? [String: Any] else {
            guard answer.status != 200 else { return .failure(HTTPFailure(Self.unknownError("chromedriver answered \(command) without a result"))) }
            return .failure(HTTPFailure(answer))
        }
        return .success(result)
    }

    /// WebDriver's `unknown error` (500), also a problem (docs/server.md).
    static func unknownError(_ message: String) -> HTTPResponse { error(500, "unknown error", .unknown, message) }

    /// A WebDriver error: `value.error` `code`, `value.message`, as a problem of `status` and `name`.
    static func error(_ status: Int, _ code: String, _ name: SessionError.Name, _ message: String) -> HTTPResponse {
        var problem = Problem(status, name, message)
        problem.webDriverError = code
        return problem.response
    }
}

/// An answer that is a failure, as an error.
struct HTTPFailure: Error {
    let answer: HTTPResponse
    init(_ answer: HTTPResponse) { self.answer = answer }
}
