/// CORS (Fetch §3.2), so that a page's own script — the page bridge (`GET /bridge.js`,
/// docs/browser.md) — can call the server from the page's origin. Any origin may ask: the bearer
/// token, which a preflight never carries and every real request needs, is what admits a caller,
/// and a page has it only when a test put it there.
enum CrossOrigin {
    /// The answer to a preflight (`OPTIONS` with `Origin`): every method and the two headers the
    /// bridge sends, a private-network request allowed (the server is on loopback), kept 10 minutes.
    /// `nil` for any other request.
    static func preflight(_ request: HTTPRequest) -> HTTPResponse? {
        guard request.method == "OPTIONS", let origin = request.origin else { return nil }
        return HTTPResponse(status: 204, contentType: .none, body: [], headers: headers(origin: origin) + [
            ("Access-Control-Allow-Methods", "GET, POST, PUT, DELETE"),
            ("Access-Control-Allow-Headers", "Authorization, Content-Type"),
            ("Access-Control-Allow-Private-Network", "true"),
            ("Access-Control-Max-Age", "600"),
        ])
    }

    /// The headers every answer to a cross-origin request carries.
    static func headers(origin: String) -> [(String, String)] {
        [("Access-Control-Allow-Origin", origin), ("Access-Control-Expose-Headers", "Location"), ("Vary", "Origin")]
    }
}
