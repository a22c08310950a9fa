/// The routes of the server, matched segment by segment: a literal segment or a `{parameter}`.
/// A path that matches a route under another method is `405` with `Allow`; one that matches
/// none is `404`.
struct Router<Context> {
    struct Route {
        let method: String
        let pattern: String
        let segments: [Segment]
        /// The body it takes: its members are the contract's (`nil`: it reads none).
        let body: (any RequestBodyType.Type)?
        let run: (Context, Call) throws(Problem) -> HTTPResponse
    }

    enum Segment: Equatable {
        case literal(String)
        case parameter(String)
    }

    /// One request as a route sees it: its parameters, its query, its body and the request.
    struct Call {
        let request: HTTPRequest
        let parameters: [String: String]
        let query: [String: String]

        func parameter(_ name: String) -> String { parameters[name] ?? "" }
    }

    private(set) var routes = [Route]()

    /// A route that reads no body.
    mutating func add(_ method: String, _ pattern: String, _ run: @escaping (Context, Call) throws(Problem) -> HTTPResponse) {
        routes.append(Route(method: method, pattern: pattern, segments: Self.segments(pattern), body: nil, run: run))
    }

    /// A route that takes a body of type `Body`, decoded before it runs; `answering` runs the whole
    /// of it, the decoding too (WebDriver's routes answer a failure in WebDriver's shape).
    mutating func add<Body: RequestBodyType>(_ method: String, _ pattern: String, body: Body.Type,
                                             answering: @escaping Answering = { run throws(Problem) in try run() },
                                             _ run: @escaping (Context, Call, Body) throws(Problem) -> HTTPResponse) {
        routes.append(Route(method: method, pattern: pattern, segments: Self.segments(pattern), body: Body.self) { context, call throws(Problem) in
            try answering { () throws(Problem) in try run(context, call, try Body.decode(call.request.body)) }
        })
    }

    typealias Answering = (() throws(Problem) -> HTTPResponse) throws(Problem) -> HTTPResponse

    private static func segments(_ pattern: String) -> [Segment] {
        pattern.split(separator: "/").map { part -> Segment in
            part.hasPrefix("{") && part.hasSuffix("}") ? .parameter(String(part.dropFirst().dropLast())) : .literal(String(part))
        }
    }

    /// The request answered by the route that matches it: `segments` are its path's
    /// (``pathSegments(_:)``), when the caller has cut it already.
    func route(_ request: HTTPRequest, in context: Context, segments: [Substring]? = nil) -> HTTPResponse {
        let parts = (segments ?? Self.pathSegments(request.path)).dropFirst()
        var allowed = [String]()
        for route in routes where route.segments.count == parts.count {
            // Matched on its literal segments and non-empty parameters first; the parameters are
            // collected for the route that matches only (not for each route tried).
            let matches = zip(route.segments, parts).allSatisfy { segment, part in
                switch segment {
                case .literal(let text): text == part
                case .parameter: !part.isEmpty
                }
            }
            guard matches else { continue }
            guard route.method == request.method else {
                allowed.append(route.method)
                continue
            }
            var parameters = [String: String]()
            for (segment, part) in zip(route.segments, parts) {
                if case .parameter(let name) = segment { parameters[name] = String(part) }
            }
            do { return try route.run(context, Call(request: request, parameters: parameters, query: Self.query(request.query))) } catch {
                return error.response
            }
        }
        if !allowed.isEmpty {
            var answer = Problem(405, .usage, "\(JSONText.shown(request.method)) is not a method of \(JSONText.shown(request.path)) (it takes \(allowed.joined(separator: ", ")))").response
            answer.headers = [("Allow", allowed.joined(separator: ", "))]
            return answer
        }
        return Problem.notFound("no route \(JSONText.shown(request.method)) \(JSONText.shown(request.path))").response
    }

    /// A path's segments between its `/`s, as `path.split(separator: "/", omittingEmptySubsequences:
    /// false)` makes them (the first is what comes before the leading `/`). An ASCII path — every
    /// route's — is cut at its `/` bytes; any other is split by characters, as `split` does (a `/`
    /// followed by a combining mark is one character, not a `/`).
    static func pathSegments(_ path: String) -> [Substring] {
        var text = path
        // The offsets of its `/`s, read from its bytes; nil when it is not ASCII.
        let slashes: [Int]? = text.withUTF8 { bytes in
            var out = [Int]()
            for (offset, byte) in bytes.enumerated() {
                if byte >= 0x80 { return nil }
                if byte == UInt8(ascii: "/") { out.append(offset) }
            }
            return out
        }
        guard let slashes else { return path.split(separator: "/", omittingEmptySubsequences: false) }
        let utf8 = text.utf8
        var parts = [Substring]()
        parts.reserveCapacity(slashes.count + 1)
        var start = utf8.startIndex
        for offset in slashes {
            let slash = utf8.index(utf8.startIndex, offsetBy: offset)
            parts.append(text[start..<slash])
            start = utf8.index(after: slash)
        }
        parts.append(text[start...])
        return parts
    }

    /// `a=1&b=2`, each name and value percent-decoded (the last of a repeated name stands).
    static func query(_ text: String) -> [String: String] {
        var out = [String: String]()
        for pair in text.split(separator: "&") {
            let (name, value) = pair.firstIndex(of: "=").map { (pair[..<$0], pair[pair.index(after: $0)...]) } ?? (pair[...], ""[...])
            out[decoded(name)] = decoded(value)
        }
        return out
    }

    private static func decoded(_ text: Substring) -> String {
        String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text)
    }
}
