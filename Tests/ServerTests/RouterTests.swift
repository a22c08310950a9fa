import Testing
@testable import Server

/// The router's matching: a path cut into segments, a route found by its literal segments and
/// non-empty parameters, its parameters named, `405` with `Allow` and `404` otherwise.
struct RouterTests {
    /// What each route answers: its pattern and its parameters, `name=value` sorted.
    static func router() -> Router<Void> {
        var router = Router<Void>()
        for (method, pattern) in [("GET", "/accounts"), ("POST", "/accounts"), ("GET", "/accounts/{account}"),
                                  ("DELETE", "/accounts/{account}"), ("POST", "/accounts/{account}/devices/{device}/sign"),
                                  ("POST", "/accounts/{account}/devices/{device}/register"),
                                  ("GET", "/accounts/{account}/passkeys/{credential}"), ("GET", "/health")] {
            router.add(method, pattern) { _, call throws(Problem) in
                let parameters = call.parameters.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: ",")
                return .json(200, "\(method) \(pattern) \(parameters)")
            }
        }
        return router
    }

    func answer(_ method: String, _ path: String) -> (Int, String, [(String, String)]) {
        let response = Self.router().route(HTTPRequest(method: method, path: path, authorization: nil, body: [], bodyTooLarge: false), in: ())
        return (response.status, String(decoding: response.body, as: UTF8.self), response.headers)
    }

    @Test func aPathIsCutAsSplitCutsIt() {
        let paths = ["", "/", "//", "/accounts", "/accounts/", "/accounts//devices", "a/b", "/a/b/c/", "///x//",
                     // Not ASCII: a "/" with a combining mark after it is one character, not a "/".
                     "/caf\u{E9}/x", "/a/\u{301}b/c", "/\u{301}", "/a\u{301}/b", "/\u{1F600}/\u{1F600}/", "/e\u{301}/"]
        for path in paths {
            #expect(Router<Void>.pathSegments(path) == path.split(separator: "/", omittingEmptySubsequences: false), "\(path.unicodeScalars.map { $0.value })")
        }
        #expect(Router<Void>.pathSegments("/a/\u{301}b/c").count == 3)  // "a/́b" is one segment
    }

    @Test func theRouteThatMatchesAnswersWithItsParameters() {
        #expect(answer("POST", "/accounts/acc1/devices/phone/sign").1 == "POST /accounts/{account}/devices/{device}/sign account=acc1,device=phone")
        #expect(answer("POST", "/accounts/acc1/devices/phone/register").1
            == "POST /accounts/{account}/devices/{device}/register account=acc1,device=phone")
        #expect(answer("GET", "/accounts/acc1").1 == "GET /accounts/{account} account=acc1")
        #expect(answer("DELETE", "/accounts/acc1").1 == "DELETE /accounts/{account} account=acc1")
        #expect(answer("GET", "/accounts").1 == "GET /accounts ")
        #expect(answer("GET", "/accounts/acc1/passkeys/cred").1 == "GET /accounts/{account}/passkeys/{credential} account=acc1,credential=cred")
        // A parameter that is not ASCII, and one that is a character with a combining mark.
        #expect(answer("GET", "/accounts/caf\u{E9}").1 == "GET /accounts/{account} account=caf\u{E9}")
        #expect(answer("GET", "/accounts/e\u{301}/passkeys/x").1 == "GET /accounts/{account}/passkeys/{credential} account=e\u{301},credential=x")
    }

    @Test func aMethodOfAnotherRouteIs405WithAllowAndNoRouteIs404() {
        let (status, _, headers) = answer("PUT", "/accounts/acc1")
        #expect(status == 405)
        #expect(headers.first { $0.0 == "Allow" }?.1 == "GET, DELETE")
        #expect(answer("GET", "/accounts/acc1/devices/phone/sign").0 == 405)
        // A literal that differs, an empty parameter, a segment too many or too few.
        #expect(answer("POST", "/accounts/acc1/device/phone/sign").0 == 404)
        #expect(answer("POST", "/accounts//devices/phone/sign").0 == 404)
        #expect(answer("POST", "/accounts/acc1/devices//sign").0 == 404)
        #expect(answer("GET", "/accounts/acc1/").0 == 404)
        #expect(answer("GET", "/health/").0 == 404)
        #expect(answer("GET", "health").0 == 404)
        #expect(answer("POST", "/accounts/acc1/devices/phone/sign/more").0 == 404)
        // A literal with a character more (a combining mark) is another literal.
        #expect(answer("GET", "/he\u{301}alth").0 == 404)
        #expect(answer("GET", "/health").0 == 200)
    }
}
