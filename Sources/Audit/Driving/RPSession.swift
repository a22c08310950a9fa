import Curl
import Foundation
import Session

/// One user's browser at the audited RP: its own cookie jar, requests only to the RP's own base
/// URL (a path, never another host; no redirect followed), each answer at most
/// ``HTTPClient/replyLimit`` bytes and within ``timeoutSeconds``, and no more than the audit's
/// rate of requests a second across every session.
final class RPSession {
    /// What one request and its answer were: a finding's evidence.
    struct Exchange: Sendable, Codable {
        let method: String
        let path: String
        let body: String?
        let status: Int
        let answer: String
    }

    struct Answer {
        let status: Int
        let json: JSONValue?
        let text: String
        /// Its `Set-Cookie` headers' values.
        var setCookies: [String] = []
    }

    let base: String
    let pacer: Pacer
    private let client: HTTPClient
    static let timeoutSeconds = 10
    private(set) var exchanges = [Exchange]()

    init(base: String, pacer: Pacer) throws(AuditError) {
        self.base = base
        self.pacer = pacer
        do { client = try HTTPClient() } catch { throw AuditError(.rpUnusable, error.message) }
    }

    /// Sends `request` with its `${…}` filled from `values`.
    func send(_ request: AuditProfile.Request, _ values: [String: JSONValue]) throws(AuditError) -> Answer {
        guard request.path.hasPrefix("/"), !request.path.hasPrefix("//") else {
            throw AuditError(.badInput, "a profile's path must start with one '/' (a path on the audited RP): '\(request.path)'")
        }
        let body = request.body.map { JSONOutput.string($0.filled(values)) }
        pacer.wait()
        let response: HTTPClient.Response
        do {
            response = try client.send(method: request.method, url: base + request.path, body: body.map { Array($0.utf8) },
                                       timeoutSeconds: Self.timeoutSeconds)
        } catch {
            throw AuditError(.rpUnusable, "\(request.method) \(request.path): \(error.reason)")
        }
        let text = String(decoding: response.body, as: UTF8.self)
        exchanges.append(Exchange(method: request.method, path: request.path, body: body, status: response.status,
                                  answer: String(text.prefix(2000))))
        return Answer(status: response.status, json: JSONValue(parsing: text), text: text, setCookies: response.setCookies)
    }
}

/// At most `perSecond` requests a second, for every session of one audit.
final class Pacer: @unchecked Sendable {
    private let interval: Double
    private var next = 0.0

    init(perSecond: Int) { interval = perSecond > 0 ? 1 / Double(perSecond) : 0 }

    private static func now() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    func wait() {
        let now = Self.now()
        if next > now { usleep(useconds_t((next - now) * 1e6)) }
        next = max(now, next) + interval
    }
}
