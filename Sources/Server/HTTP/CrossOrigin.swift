/// CORS (Fetch §3.2), so that a page's own script — the page bridge (`GET /bridge.js`,
/// docs/browser.md) — can call the server from the page's origin. Any origin may ask: the bearer
/// token, which a preflight never carries and every real request needs, is what admits a caller,
/// and a page has it only when a test put it there.
enum CrossOrigin {
    /// The answer to a preflight (`OPTIONS` with `Origin`): every method and the two headers the
    /// bridge sends, a private-network request allowed (the server is on loopback), kept 10 minutes.
    /// `nil` for any other request.
    static func preflight(_ request: HTTPRequest) -> HTTPResponse? {
        guard request.method == "OPTIONS", let origin = answered(request.origin) else { return nil }
        return HTTPResponse(status: 204, contentType: .none, body: [], headers: headers(origin: origin) + [
            ("Access-Control-Allow-Methods", "GET, POST, PUT, DELETE"),
            ("Access-Control-Allow-Headers", "Authorization, Content-Type"),
            ("Access-Control-Allow-Private-Network", "true"),
            ("Access-Control-Max-Age", "600"),
        ])
    }

    /// The longest `Origin` answered with CORS headers. An origin is a scheme, a host (a DNS name
    /// has at most 253 bytes) and a port; a longer value is no page's, and written back it may not
    /// fit beside a request's 128 KiB of headers in the connection's memory, where libmicrohttpd
    /// then closes the connection without an answer.
    static let longestOrigin = 2048

    /// The request's `Origin` when it is answered as one: not when it is longer than ``longestOrigin``
    /// (the request is then answered as one without `Origin`).
    static func answered(_ origin: String?) -> String? {
        origin.flatMap { $0.utf8.count <= longestOrigin ? $0 : nil }
    }

    /// The headers every answer to a cross-origin request carries.
    static func headers(origin: String) -> [(String, String)] {
        [("Access-Control-Allow-Origin", origin), ("Access-Control-Expose-Headers", "Location"), ("Vary", "Origin")]
    }
}
