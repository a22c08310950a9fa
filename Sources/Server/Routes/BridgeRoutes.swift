import Foundation

/// `GET /bridge.js`: the page bridge (docs/browser.md) for one device of one account — the script
/// a test injects before a page loads, its WebAuthn calls then answered by that device. It holds
/// the server's token: the page it is injected into can do anything the token can.
extension AccountService {
    func addBridgeRoutes(to router: inout Router<AccountService>) {
        router.add("GET", "/bridge.js") { s, call throws(Problem) in
            guard call.query.keys.allSatisfy(["account", "device", "server"].contains) else {
                throw Problem.input("/bridge.js takes account, device and server")
            }
            guard let account = call.query["account"], let device = call.query["device"] else {
                throw Problem.input("/bridge.js?account=ID&device=NAME: the device whose passkeys the page uses")
            }
            let hosted = try s.hosted(account)
            try hosted.serve { () throws(Problem) in
                guard hosted.session.deviceNames.contains(device) else {
                    throw Problem.notFound("account \(JSONText.shown(account)) has no device \(JSONText.shown(device))")
                }
            }
            let server = try Self.bridgeServer(call)
            guard let script = s.bridgeScript(server: server, account: account, device: device) else {
                throw Problem.input("the bridge's settings are not text")
            }
            return HTTPResponse(status: 200, contentType: .javascript, body: Array(script.utf8))
        }
    }

    /// The page bridge for `device` of `account`, reaching the server at `server` with its token
    /// (`nil`: settings that are not text).
    func bridgeScript(server: String, account: String, device: String) -> String? {
        let config: [String: String] = ["server": server, "token": tokenText, "account": account, "device": device]
        guard let json = try? JSONSerialization.data(withJSONObject: config, options: [.sortedKeys, .withoutEscapingSlashes]),
              var text = String(data: json, encoding: .utf8) else { return nil }
        // Safe inside an HTML <script> element too.
        text = text.replacingOccurrences(of: "<", with: "\\u003c")
        return PageBridgeScript.text.replacingOccurrences(of: "__AUTHCTL_CONFIG__", with: text)
    }

    /// The server's URL as the page reaches it: `server` when the query gives one (`http` or
    /// `https`, no path), else `http://` and the request's `Host`.
    private static func bridgeServer(_ call: Router<AccountService>.Call) throws(Problem) -> String {
        if let given = call.query["server"] {
            guard let url = URLComponents(string: given), ["http", "https"].contains(url.scheme ?? ""), url.host?.isEmpty == false,
                  url.path.isEmpty || url.path == "/", url.query == nil, url.fragment == nil, url.user == nil else {
                throw Problem.input("server must be an http(s) URL with no path, such as http://127.0.0.1:8080")
            }
            return given.hasSuffix("/") ? String(given.dropLast()) : given
        }
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]")
        guard let host = call.request.host, !host.isEmpty, host.allSatisfy(allowed.contains) else {
            throw Problem.input("the request has no Host a page could reach the server by: give server=URL")
        }
        return "http://\(host)"
    }
}
