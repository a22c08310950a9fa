import Foundation
import Session

/// How to drive one relying party (docs/audit.md, "A profile for your RP"): where its ceremonies
/// begin and finish, how a user comes to exist and to be signed in, where the options sit in a
/// begin's answer and where the response goes in a finish, and what success looks like. Read from
/// a JSON file (`authctl audit --profile FILE`) or a preset (`--preset rp-server`). An RP with no
/// password sign-up, login or signed-in page (the FIDO conformance API) leaves `signUp`, `logIn`
/// and `signedIn` out: its users come into being at the registration's begin, and the cases that
/// need what it lacks are inconclusive, saying so.
package struct AuditProfile: Codable, Sendable, Equatable {
    /// One HTTP request: its method, a path on the audited RP (never another host), and its JSON
    /// body, in which the strings `${user}`, `${password}` and `${response}` stand for the user's
    /// name, its password and the authenticator's response (inserted as JSON, not as text).
    package struct Request: Codable, Sendable, Equatable {
        /// How the body is sent: JSON, or a form (`application/x-www-form-urlencoded`: each member
        /// of the body's object a field, a string as it is, anything else — the response — as
        /// its JSON text).
        package enum Encoding: String, Codable, Sendable {
            case json, form
        }

        package var method: String
        /// The path and query; `${user}` and `${password}` in it are filled, percent-encoded.
        package var path: String
        package var body: JSONValue?
        package var encoding: Encoding?
        /// More request headers (an API key, a CSRF header), `${…}` in a value filled as text.
        package var headers: [String: String]?

        package init(method: String = "POST", path: String, body: JSONValue? = nil, encoding: Encoding? = nil, headers: [String: String]? = nil) {
            (self.method, self.path, self.body, self.encoding, self.headers) = (method, path, body, encoding, headers)
        }
    }

    /// A ceremony's two requests, and the member of the begin's answer that holds the options
    /// (`publicKey`; dotted for a deeper one; empty for the answer itself).
    package struct Ceremony: Codable, Sendable, Equatable {
        package var begin: Request
        package var options: String
        package var finish: Request

        package init(begin: Request, options: String = "publicKey", finish: Request) {
            (self.begin, self.options, self.finish) = (begin, options, finish)
        }
    }

    /// What an answer must be to count as the RP's yes: a status in 200–299, and each of these
    /// that is given: `member` (dotted) equal to `equals` (`true` when left out), a cookie named
    /// `cookie` set by the answer, `contains` in its body (an HTML page only a signed-in user sees).
    package struct Success: Codable, Sendable, Equatable {
        package var member: String?
        package var equals: JSONValue?
        package var cookie: String?
        package var contains: String?

        package init(member: String? = nil, equals: JSONValue? = nil, cookie: String? = nil, contains: String? = nil) {
            (self.member, self.equals, self.cookie, self.contains) = (member, equals, cookie, contains)
        }
    }

    /// The origin the RP's pages have: what an honest browser puts in clientDataJSON.
    package var origin: String
    /// Makes a new user and leaves its session signed in (a sign-up form, an admin call); `nil`
    /// where a user comes into being at the registration's begin (whose body names `${user}`).
    package var signUp: Request?
    /// Signs a user in with its password (for a fresh session of a user that exists); `nil` for
    /// an RP without one.
    package var logIn: Request?
    package var register: Ceremony
    /// A username-first sign-in: its begin names the user (`${user}`).
    package var signIn: Ceremony
    /// A discoverable sign-in: its begin names no user, and the response's `userHandle` says who
    /// signs in (WebAuthn L3 §7.2 step 6); `nil` for an RP without one (its cases are then not run).
    package var discoverableSignIn: Ceremony?
    /// A request only a signed-in user gets a yes to, and what that yes is; `nil` for an RP
    /// without one (a refused sign-in is then not probed).
    package var signedIn: Request?
    package var signedInSuccess: Success
    /// What a finish answers when the RP accepts a response.
    package var success: Success

    package init(origin: String, signUp: Request?, logIn: Request?, register: Ceremony, signIn: Ceremony,
                discoverableSignIn: Ceremony? = nil, signedIn: Request?, signedInSuccess: Success = Success(), success: Success = Success()) {
        self.origin = origin
        self.signUp = signUp
        self.logIn = logIn
        self.register = register
        self.signIn = signIn
        self.discoverableSignIn = discoverableSignIn
        self.signedIn = signedIn
        self.signedInSuccess = signedInSuccess
        self.success = success
    }

    /// The presets `--preset` names.
    package static let presets: KeyValuePairs<String, AuditProfile> = [
        "rp-server": rpServer, "fido-conformance": fidoConformance, "simplewebauthn-example": simpleWebAuthnExample,
    ]

    /// docs/examples/rp_server.py: sign-up and password login, `{"publicKey": options}` from each
    /// begin, `{"credential": response}` to each finish, `{"verified": true}` for a yes, and
    /// `GET /account` only for a signed-in user. Its sign-in begin without a username is the
    /// discoverable one.
    package static let rpServer = AuditProfile(
        origin: "https://yourbank.example",
        signUp: Request(path: "/signup", body: .object(["username": .string("${user}"), "password": .string("${password}")])),
        logIn: Request(path: "/password/login", body: .object(["username": .string("${user}"), "password": .string("${password}")])),
        register: Ceremony(begin: Request(path: "/register/begin", body: .object([:])),
                           finish: Request(path: "/register/finish", body: .object(["credential": .string("${response}")]))),
        signIn: Ceremony(begin: Request(path: "/login/begin", body: .object(["username": .string("${user}")])),
                         finish: Request(path: "/login/finish", body: .object(["credential": .string("${response}")]))),
        discoverableSignIn: Ceremony(begin: Request(path: "/login/begin", body: .object([:])),
                                     finish: Request(path: "/login/finish", body: .object(["credential": .string("${response}")]))),
        signedIn: Request(method: "GET", path: "/account"),
        success: Success(member: "verified", equals: .bool(true)))

    /// The FIDO Alliance's FIDO2 server conformance test API (docs/examples/conformance_rp.py):
    /// `POST /attestation/options` with a ServerPublicKeyCredentialCreationOptionsRequest makes the
    /// user it names and answers the options at the top level beside `status` and `errorMessage`;
    /// `/attestation/result` and `/assertion/result` take the ServerPublicKeyCredential as the whole
    /// body and answer a ServerResponse, `{"status": "ok", "errorMessage": ""}` for a yes. It has no
    /// sign-up, login or signed-in page. User verification is asked for as required in both
    /// ceremonies, so that the UV cases are judged; attestation `none`, as every case registers.
    package static let fidoConformance = AuditProfile(
        origin: "https://localhost",
        signUp: nil, logIn: nil,
        register: Ceremony(begin: Request(path: "/attestation/options", body: .object([
                               "username": .string("${user}"), "displayName": .string("${user}"),
                               "authenticatorSelection": .object(["userVerification": .string("required")]),
                               "attestation": .string("none")])),
                           options: "",
                           finish: Request(path: "/attestation/result", body: .string("${response}"))),
        signIn: Ceremony(begin: Request(path: "/assertion/options",
                                        body: .object(["username": .string("${user}"), "userVerification": .string("required")])),
                         options: "",
                         finish: Request(path: "/assertion/result", body: .string("${response}"))),
        signedIn: nil,
        success: Success(member: "status", equals: .string("ok")))

    /// SimpleWebAuthn's example server (MasterKale/SimpleWebAuthn, example/index.ts;
    /// docs/examples/simplewebauthn_example_rp.py): `GET /generate-registration-options` and
    /// `GET /generate-authentication-options` answer the options at the top level,
    /// `/verify-registration` and `/verify-authentication` take the response as the whole body and
    /// answer `{"verified": true}`; an express-session cookie; the origin `http://localhost:8000`.
    /// The example has one user, taken as signed in; an app built from it names the user, and this
    /// preset as the usual adaptation does: `?username=` on both begins (no sign-up: the user comes
    /// into being at the registration's begin). No login and no signed-in page: the example's
    /// sign-in makes no session.
    package static let simpleWebAuthnExample = AuditProfile(
        origin: "http://localhost:8000",
        signUp: nil, logIn: nil,
        register: Ceremony(begin: Request(method: "GET", path: "/generate-registration-options?username=${user}"),
                           options: "",
                           finish: Request(path: "/verify-registration", body: .string("${response}"))),
        signIn: Ceremony(begin: Request(method: "GET", path: "/generate-authentication-options?username=${user}"),
                         options: "",
                         finish: Request(path: "/verify-authentication", body: .string("${response}"))),
        signedIn: nil,
        success: Success(member: "verified", equals: .bool(true)))
}

extension AuditProfile {
    private enum CodingKeys: String, CodingKey {
        case origin, signUp, logIn, register, signIn, discoverableSignIn, signedIn, signedInSuccess, success
    }

    /// `signUp`, `logIn`, `discoverableSignIn` and `signedIn` may be left out (or `null`);
    /// `signedInSuccess` left out is any 2xx.
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        origin = try c.decode(String.self, forKey: .origin)
        signUp = try c.decodeIfPresent(Request.self, forKey: .signUp)
        logIn = try c.decodeIfPresent(Request.self, forKey: .logIn)
        register = try c.decode(Ceremony.self, forKey: .register)
        signIn = try c.decode(Ceremony.self, forKey: .signIn)
        discoverableSignIn = try c.decodeIfPresent(Ceremony.self, forKey: .discoverableSignIn)
        signedIn = try c.decodeIfPresent(Request.self, forKey: .signedIn)
        signedInSuccess = try c.decodeIfPresent(Success.self, forKey: .signedInSuccess) ?? Success()
        success = try c.decode(Success.self, forKey: .success)
    }
}

extension AuditProfile {
    /// The profile in `file`: a regular file of at most 1 MiB (a FIFO or a device would be read
    /// for ever), JSON of this shape.
    package init(file: String) throws(AuditError) {
        var info = stat()
        guard stat(file, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size <= 1 << 20,
              let data = FileManager.default.contents(atPath: file) else {
            throw AuditError(.badInput, "--profile: \(EchoedInput.path(file)) is not a readable file of at most 1 MiB")
        }
        do { self = try JSONDecoder().decode(AuditProfile.self, from: data) } catch {
            throw AuditError(.badInput, "--profile \(EchoedInput.path(file)) is not a profile: \(EchoedInput.words(String(describing: error)))")
        }
    }
}

extension JSONValue {
    /// The member at a dotted path (`a.b`); the value itself for an empty path.
    func member(_ path: String) -> JSONValue? {
        var value = self
        for key in path.split(separator: ".", omittingEmptySubsequences: true) {
            guard case .object(let members) = value, let next = members[String(key)] else { return nil }
            value = next
        }
        return value
    }

    /// The value with each string that is a whole `${name}` replaced by `values[name]`.
    func filled(_ values: [String: JSONValue]) -> JSONValue {
        switch self {
        case .string(let text) where text.hasPrefix("${") && text.hasSuffix("}"):
            return values[String(text.dropFirst(2).dropLast())] ?? self
        case .array(let items): return .array(items.map { $0.filled(values) })
        case .object(let members): return .object(members.mapValues { $0.filled(values) })
        default: return self
        }
    }
}
