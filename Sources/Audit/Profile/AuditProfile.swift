import Foundation
import Session

/// How to drive one relying party (docs/audit.md, "A profile for your RP"): where its ceremonies
/// begin and finish, how a user comes to exist and to be signed in, where the options sit in a
/// begin's answer and where the response goes in a finish, and what success looks like. Read from
/// a JSON file (`authctl audit --profile FILE`) or a preset (`--preset rp-server`).
package struct AuditProfile: Codable, Sendable, Equatable {
    /// One HTTP request: its method, a path on the audited RP (never another host), and its JSON
    /// body, in which the strings `${user}`, `${password}` and `${response}` stand for the user's
    /// name, its password and the authenticator's response (inserted as JSON, not as text).
    package struct Request: Codable, Sendable, Equatable {
        package var method: String
        package var path: String
        package var body: JSONValue?

        package init(method: String = "POST", path: String, body: JSONValue? = nil) {
            (self.method, self.path, self.body) = (method, path, body)
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

    /// What an answer must be to count as the RP's yes: a status in 200–299, and, when
    /// `member` is given, that member (dotted) equal to `equals`.
    package struct Success: Codable, Sendable, Equatable {
        package var member: String?
        package var equals: JSONValue?

        package init(member: String? = nil, equals: JSONValue? = nil) { (self.member, self.equals) = (member, equals) }
    }

    /// The origin the RP's pages have: what an honest browser puts in clientDataJSON.
    package var origin: String
    /// Makes a new user and leaves its session signed in (a sign-up form, an admin call).
    package var signUp: Request
    /// Signs a user in with its password (for a fresh session of a user that exists).
    package var logIn: Request
    package var register: Ceremony
    /// A username-first sign-in: its begin names the user (`${user}`).
    package var signIn: Ceremony
    /// A request only a signed-in user gets a yes to, and what that yes is.
    package var signedIn: Request
    package var signedInSuccess: Success
    /// What a finish answers when the RP accepts a response.
    package var success: Success

    package init(origin: String, signUp: Request, logIn: Request, register: Ceremony, signIn: Ceremony, signedIn: Request,
                signedInSuccess: Success = Success(), success: Success = Success()) {
        self.origin = origin
        self.signUp = signUp
        self.logIn = logIn
        self.register = register
        self.signIn = signIn
        self.signedIn = signedIn
        self.signedInSuccess = signedInSuccess
        self.success = success
    }

    /// The presets `--preset` names.
    package static let presets: KeyValuePairs<String, AuditProfile> = ["rp-server": rpServer]

    /// docs/examples/rp_server.py: sign-up and password login, `{"publicKey": options}` from each
    /// begin, `{"credential": response}` to each finish, `{"verified": true}` for a yes, and
    /// `GET /account` only for a signed-in user.
    package static let rpServer = AuditProfile(
        origin: "https://yourbank.example",
        signUp: Request(path: "/signup", body: .object(["username": .string("${user}"), "password": .string("${password}")])),
        logIn: Request(path: "/password/login", body: .object(["username": .string("${user}"), "password": .string("${password}")])),
        register: Ceremony(begin: Request(path: "/register/begin", body: .object([:])),
                           finish: Request(path: "/register/finish", body: .object(["credential": .string("${response}")]))),
        signIn: Ceremony(begin: Request(path: "/login/begin", body: .object(["username": .string("${user}")])),
                         finish: Request(path: "/login/finish", body: .object(["credential": .string("${response}")]))),
        signedIn: Request(method: "GET", path: "/account"),
        success: Success(member: "verified", equals: .bool(true)))
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
