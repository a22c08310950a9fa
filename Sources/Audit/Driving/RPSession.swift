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

    /// The user this browser last spoke for (`${user}`, `${password}`): a finish, which is sent
    /// with the response only, fills them from here — the user whose ceremony the browser began.
    private var speaksFor = [String: JSONValue]()

    /// Sends `request` with its `${…}` filled from `values` (and the user this browser last spoke
    /// for, where `values` names none).
    func send(_ request: AuditProfile.Request, _ values: [String: JSONValue]) throws(AuditError) -> Answer {
        var values = values
        if values["user"] != nil {
            speaksFor = values.filter { $0.key == "user" || $0.key == "password" }
        } else {
            values.merge(speaksFor) { given, _ in given }
        }
        guard request.path.hasPrefix("/"), !request.path.hasPrefix("//") else {
            throw AuditError(.badInput, "a profile's path must start with one '/' (a path on the audited RP): '\(request.path)'")
        }
        let path = Self.filled(request.path, values, encoded: true)
        let filled = request.body.map { $0.filled(values) }
        let body: String?, contentType: String
        switch request.encoding ?? .json {
        case .json: (body, contentType) = (filled.map { JSONOutput.string($0) }, "application/json")
        case .form: (body, contentType) = (filled.map(Self.form), "application/x-www-form-urlencoded")
        }
        let headers = (request.headers ?? [:]).sorted { $0.key < $1.key }.map { ($0.key, Self.filled($0.value, values, encoded: false)) }
        if pacer.isCanceled() { throw AuditError(.canceled, "the audit was stopped") }
        pacer.wait()
        let response: HTTPClient.Response
        do {
            response = try client.send(method: request.method, url: base + path, body: body.map { Array($0.utf8) }, contentType: contentType,
                                       extraHeaders: headers, timeoutSeconds: Self.timeoutSeconds)
        } catch {
            throw AuditError(.rpUnusable, "\(request.method) \(path): \(error.reason)")
        }
        let text = String(decoding: response.body, as: UTF8.self)
        exchanges.append(Exchange(method: request.method, path: path, body: body, status: response.status,
                                  answer: String(text.prefix(2000))))
        return Answer(status: response.status, json: JSONValue(parsing: text), text: text, setCookies: response.setCookies)
    }
}

extension RPSession {
    /// `text` with each `${name}` whose value is a string replaced by it — percent-encoded for a
    /// path or query (RFC 3986's unreserved characters kept), as it is for a header (whose
    /// values the audit makes: names and passwords of letters, digits and dashes).
    static func filled(_ text: String, _ values: [String: JSONValue], encoded: Bool) -> String {
        var out = text
        for (name, value) in values {
            guard case .string(let string) = value, out.contains("${\(name)}") else { continue }
            out = out.replacingOccurrences(of: "${\(name)}", with: encoded ? percentEncoded(string) : string)
        }
        return out
    }

    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, 0x2D, 0x2E, 0x5F, 0x7E: out.unicodeScalars.append(Unicode.Scalar(byte))
            default: out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }

    /// An object as `application/x-www-form-urlencoded` (WHATWG URL §5.2): its members in name
    /// order, a string as it is, any other value as its JSON text.
    static func form(_ value: JSONValue) -> String {
        guard case .object(let members) = value else { return "" }
        return members.sorted { $0.key < $1.key }.map { name, member in
            let text: String
            if case .string(let string) = member { text = string } else { text = JSONOutput.string(member) }
            return formEncoded(name) + "=" + formEncoded(text)
        }.joined(separator: "&")
    }

    private static func formEncoded(_ text: String) -> String {
        percentEncoded(text).replacingOccurrences(of: "%20", with: "+")
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}

/// At most `perSecond` requests a second, for every session of one audit.
/// Asked before each request too: an audit told to stop sends nothing more (it ends within one
/// request's timeout, not a case's).
final class Pacer: @unchecked Sendable {
    private let interval: Double
    private var next = 0.0
    let isCanceled: @Sendable () -> Bool

    init(perSecond: Int, isCanceled: @escaping @Sendable () -> Bool = { false }) {
        interval = perSecond > 0 ? 1 / Double(perSecond) : 0
        self.isCanceled = isCanceled
    }

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
