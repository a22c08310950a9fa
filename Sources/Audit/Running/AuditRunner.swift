import Foundation
import Session

/// Runs the battery against one RP (docs/audit.md): a baseline first — a user made, a passkey
/// registered and signed in with, each the RP's yes — or it stops (`rpUnusable`); then each case
/// alone, on users of its own, each followed by its probe: after a registration the RP refused,
/// a sign-in with that credential (the RP must not have kept it); after a sign-in it refused, a
/// look at whether the browser is signed in (it must not be).
package final class AuditRunner {
    package struct Options: Sendable {
        /// Requests a second, at most, across the audit.
        package var rate = 50
        /// Cases (or families) to run, and to leave out.
        package var only: Set<String> = []
        package var skip: Set<String> = []
        /// Told of each case as it ends (a terminal's progress line).
        package var progress: (@Sendable (AuditReport.Result, Int, Int) -> Void)?
        /// Asked before each request and between cases: a run told to stop sends nothing more and
        /// ends with `canceled` (the caller that stopped it says why).
        package var isCanceled: @Sendable () -> Bool = { false }

        package init() {}
    }

    let base: String
    let profile: AuditProfile
    let options: Options
    let pacer: Pacer
    let authenticator: Session
    /// The throw-away vault's directory, removed when the runner ends (or by whoever stops the
    /// process first).
    package let workspace: String
    private var userCount = 0
    let runId = String(UInt32.random(in: 0...UInt32.max), radix: 36)
    static let pin = "246810"

    /// An audit of the RP at `base` (`http(s)://host[:port]`, no path).
    package init(base: String, profile: AuditProfile, options: Options = Options()) throws(AuditError) {
        (self.base, self.profile) = try Self.checked(base: base, profile: profile)
        self.options = options
        pacer = Pacer(perSecond: options.rate, isCanceled: options.isCanceled)
        var template = Array((NSTemporaryDirectory() + "/authctl-audit-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw AuditError(.ioError, "cannot make a temporary directory ($TMPDIR)") }
        workspace = String(cString: made)
        func secret(_ text: String) -> SecureBytes {
            var bytes = Array(text.utf8)
            return SecureBytes(consuming: &bytes)
        }
        do {
            authenticator = try Session.create(AccountSpec(path: workspace + "/vault", passphrase: secret("audit"), kdf: .min,
                                                           devices: [AccountSpec.DeviceSpec(name: "auditor", pin: secret(Self.pin))],
                                                           keeping: .throwAway(storeInMemory: true)))
        } catch {
            try? FileManager.default.removeItem(atPath: workspace)
            throw AuditError(error.name, error.message)
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: workspace) }

    /// The RP's base URL without a trailing `/`, and the profile, or `badInput` for either: what
    /// is checked before anything is sent (and all a dry run checks).
    package static func checked(base: String, profile: AuditProfile) throws(AuditError) -> (String, AuditProfile) {
        var text = base
        while text.hasSuffix("/") { text.removeLast() }
        guard let parts = URLComponents(string: text), ["http", "https"].contains(parts.scheme ?? ""), parts.host?.isEmpty == false,
              parts.path.isEmpty, parts.query == nil, parts.fragment == nil, parts.user == nil else {
            throw AuditError(.badInput, "the RP is an http(s) URL with a host and no path, such as http://127.0.0.1:8765: '\(EchoedInput.words(base))'")
        }
        // libcurl takes a host as written: a name outside ASCII is written in its A-label form.
        guard text.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw AuditError(.badInput, "the RP's URL is ASCII (a host name outside it in its xn-- form): '\(EchoedInput.words(base))'")
        }
        guard let origin = URLComponents(string: profile.origin), ["http", "https"].contains(origin.scheme ?? ""), origin.host?.isEmpty == false,
              origin.path.isEmpty, origin.query == nil, origin.fragment == nil, origin.user == nil else {
            throw AuditError(.badInput, "the RP's origin is scheme://host[:port], such as https://rp.example: '\(profile.origin)'")
        }
        return (text, try profile.checked())
    }

    /// The cases `options` selects, in the battery's order.
    package static func selected(_ options: Options) throws(AuditError) -> [AuditCase] {
        let names = Set(AuditCase.battery.map(\.id) + AuditCase.Family.allCases.map(\.rawValue))
        if let unknown = options.only.union(options.skip).sorted().first(where: { !names.contains($0) }) {
            throw AuditError(.usage, "no case or family '\(unknown)' (authctl audit --list names them)")
        }
        return AuditCase.battery.filter { c in
            (options.only.isEmpty || options.only.contains(c.id) || options.only.contains(c.family.rawValue))
                && !options.skip.contains(c.id) && !options.skip.contains(c.family.rawValue)
        }
    }

    /// The baseline, then every selected case (``run()`` runs it, stoppable).
    func runBattery() throws(AuditError) -> AuditReport {
        let cases = try Self.selected(options)
        try baseline()
        var results = [AuditReport.Result]()
        for (i, c) in cases.enumerated() {
            if options.isCanceled() { throw AuditError(.canceled, "the audit was interrupted after \(i) of \(cases.count) cases") }
            let result = run(c)
            // Stopped during the case: its verdict is not one.
            if options.isCanceled() { throw AuditError(.canceled, "the audit was interrupted after \(i) of \(cases.count) cases") }
            results.append(result)
            options.progress?(result, i + 1, cases.count)
        }
        return AuditReport(target: base, origin: profile.origin, results: results)
    }

    // MARK: - The baseline

    private func baseline() throws(AuditError) {
        do {
            let user = try newUser()
            let made = try register(user, in: user.browser)
            guard made.answerIsYes else { throw Stop("the RP refused an honest registration: \(made.answer.shown)") }
            let browser = try RPSession(base: base, pacer: pacer)
            let signed = try signIn(user, in: browser, credential: made.response.credentialId)
            guard signed.answerIsYes else { throw Stop("the RP refused an honest sign-in: \(signed.answer.shown)") }
            if let signedIn = profile.signedIn, try !isSignedIn(browser, as: user) {
                throw Stop("after an honest sign-in, \(signedIn.path) does not say the user is signed in")
            }
            // The discoverable sign-in, when the profile has one, is honest-tested as well: its
            // cases' refusals mean nothing from an RP that refuses every response there.
            if profile.discoverableSignIn != nil {
                let browser = try RPSession(base: base, pacer: pacer)
                let signed = try signInDiscoverably(credential: made.response.credentialId, in: browser)
                guard signed.answerIsYes else { throw Stop("the RP refused an honest discoverable sign-in: \(signed.answer.shown)") }
                if let signedIn = profile.signedIn, try !isSignedIn(browser, as: user) {
                    throw Stop("after an honest discoverable sign-in, \(signedIn.path) does not say the user is signed in")
                }
            }
        } catch let stop as Stop {
            throw AuditError(.rpUnusable, "the baseline failed: \(stop.reason)")
        } catch let error as AuditError where error.name == .canceled {
            throw error
        } catch let error as AuditError {
            throw AuditError(.rpUnusable, "the baseline failed: \(error.message)")
        } catch {
            throw AuditError(.rpUnusable, "the baseline failed: \(error)")
        }
    }

    // MARK: - One case

    /// Why a case stops short of a verdict (or the baseline fails).
    struct Stop: Error { let reason: String; init(_ reason: String) { self.reason = reason } }

    private func run(_ c: AuditCase) -> AuditReport.Result {
        var exchanges = [RPSession.Exchange]()
        func result(_ verdict: AuditReport.Verdict, _ evidence: String) -> AuditReport.Result {
            AuditReport.Result(id: c.id, family: c.family, spec: c.spec, check: c.check, reference: c.reference, verdict: verdict,
                               evidence: evidence, exchanges: [.accepted, .serverError, .refused].contains(verdict) ? exchanges : nil)
        }
        do {
            let (verdict, evidence) = try judge(c, exchanges: &exchanges)
            return result(verdict, evidence)
        } catch let stop as Stop {
            return result(.inconclusive, stop.reason)
        } catch let error as AuditError where error.name == .rpUnusable {
            return result(.serverError, error.message)
        } catch let error as AuditError {
            return result(.inconclusive, error.message)
        } catch {
            return result(.inconclusive, "\(error)")
        }
    }

    /// A finish's answer judged: a 5xx is a server error, the RP's yes a finding, anything else a
    /// refusal (which the probe may still overturn).
    func verdict(of answer: RPSession.Answer, _ what: String) -> (AuditReport.Verdict, String)? {
        if answer.status >= 500 { return (.serverError, "\(what): \(answer.shown)") }
        if isYes(answer, profile.success) { return (.accepted, "\(what): the RP said yes (\(answer.shown))") }
        return nil
    }

    private func judge(_ c: AuditCase, exchanges: inout [RPSession.Exchange]) throws -> (AuditReport.Verdict, String) {
        switch c.action {
        case .registerFault(let fault):
            let user = try newUser()
            defer { exchanges += user.browser.exchanges }
            let options = try beginRegistration(user, in: user.browser)
            if fault == .uvCleared, options.userVerification != "required" {
                throw Stop("the RP does not require user verification at registration (userVerification \(options.userVerification ?? "absent")): UV=0 is allowed")
            }
            let made = try respond(toRegistration: options, fault: fault)
            let answer = try finish(profile.register, made.json, in: user.browser)
            if let judged = verdict(of: answer, "the finish") { return judged }
            // The authenticator keeps nothing of a faulted registration (an RP must refuse it):
            // there is no key to probe with.
            return (.rejected, answer.shown)
        case .registerEnvelope(let change):
            let user = try newUser()
            defer { exchanges += user.browser.exchanges }
            let options = try beginRegistration(user, in: user.browser)
            let made = try respond(toRegistration: options, fault: nil)
            let answer = try finish(profile.register, Self.change(made.json, change), in: user.browser)
            if let judged = verdict(of: answer, "the finish") { return judged }
            return try probeRegistration(user, credential: made.credentialId, refusal: answer)
        case .registerReplay:
            let user = try newUser()
            defer { exchanges += user.browser.exchanges }
            let made = try register(user, in: user.browser)
            guard made.answerIsYes else { throw Stop("the honest registration was refused: \(made.answer.shown)") }
            let again = try finish(profile.register, made.response.json, in: user.browser)
            return verdict(of: again, "the same registration finished again") ?? (.rejected, "the second finish: \(again.shown)")
        case .registerWithoutBegin:
            let user = try newUser()
            let other = try logIn(user)
            defer { exchanges += user.browser.exchanges + other.exchanges }
            let options = try beginRegistration(user, in: user.browser)
            let made = try respond(toRegistration: options, fault: nil)
            let answer = try finish(profile.register, made.json, in: other)
            if let judged = verdict(of: answer, "a finish in a session that never began") { return judged }
            return try probeRegistration(user, credential: made.credentialId, refusal: answer)
        case .registerInAnotherUsersSession:
            let victim = try newUser(), attacker = try newUser()
            defer { exchanges += victim.browser.exchanges + attacker.browser.exchanges }
            let options = try beginRegistration(victim, in: victim.browser)
            let made = try respond(toRegistration: options, fault: nil)
            _ = try beginRegistration(attacker, in: attacker.browser)
            let answer = try finish(profile.register, made.json, in: attacker.browser)
            if let judged = verdict(of: answer, "\(victim.name)'s registration finished in \(attacker.name)'s session") { return judged }
            return try probeRegistration(attacker, credential: made.credentialId, refusal: answer)
        case .signFault(let fault):
            let user = try userWithPasskey()
            let browser = try RPSession(base: base, pacer: pacer)
            defer { exchanges += browser.exchanges }
            let options = try beginSignIn(user, in: browser)
            if fault == .uvCleared, options.userVerification != "required" {
                throw Stop("the RP does not require user verification at sign-in (userVerification \(options.userVerification ?? "absent")): UV=0 is allowed")
            }
            let made = try respond(toSignIn: options, credential: user.credential, fault: fault)
            let answer = try finish(profile.signIn, made.json, in: browser)
            return try verdict(of: answer, "the finish") ?? probeSignIn(browser, user, refusal: answer)
        case .signEnvelope(let change):
            let user = try userWithPasskey()
            let browser = try RPSession(base: base, pacer: pacer)
            defer { exchanges += browser.exchanges }
            let options = try beginSignIn(user, in: browser)
            let made = try respond(toSignIn: options, credential: user.credential, fault: nil)
            let answer = try finish(profile.signIn, Self.change(made.json, change), in: browser)
            return try verdict(of: answer, "the finish") ?? probeSignIn(browser, user, refusal: answer)
        case .signReplay:
            let user = try userWithPasskey()
            let browser = try RPSession(base: base, pacer: pacer)
            defer { exchanges += browser.exchanges }
            let signed = try signIn(user, in: browser, credential: user.credential)
            guard signed.answerIsYes else { throw Stop("the honest sign-in was refused: \(signed.answer.shown)") }
            let again = try finish(profile.signIn, signed.response.json, in: browser)
            return verdict(of: again, "the same sign-in finished again") ?? (.rejected, "the second finish: \(again.shown)")
        case .signWithoutBegin:
            let user = try userWithPasskey()
            let began = try RPSession(base: base, pacer: pacer), other = try RPSession(base: base, pacer: pacer)
            defer { exchanges += began.exchanges + other.exchanges }
            let options = try beginSignIn(user, in: began)
            let made = try respond(toSignIn: options, credential: user.credential, fault: nil)
            let answer = try finish(profile.signIn, made.json, in: other)
            return try verdict(of: answer, "a finish in a session that never began") ?? probeSignIn(other, user, refusal: answer)
        case .otherUsersCredential:
            let attacker = try userWithPasskey(), victim = try userWithPasskey()
            let browser = try RPSession(base: base, pacer: pacer)
            defer { exchanges += browser.exchanges }
            let options = try beginSignIn(victim, in: browser)
            let made = try respond(toSignIn: options, credential: attacker.credential, fault: nil)
            let answer = try finish(profile.signIn, made.json, in: browser)
            return try verdict(of: answer, "the victim's sign-in answered with the attacker's passkey")
                ?? probeSignIn(browser, victim, refusal: answer)
        case .refusedSignInThenHonest:
            let user = try userWithPasskey(counting: true)
            let browser = try RPSession(base: base, pacer: pacer), after = try RPSession(base: base, pacer: pacer)
            defer { exchanges += browser.exchanges + after.exchanges }
            let options = try beginSignIn(user, in: browser)
            let made = try respond(toSignIn: options, credential: user.credential, fault: .badSignature)
            let answer = try finish(profile.signIn, made.json, in: browser)
            if let judged = verdict(of: answer, "a sign-in with a bad signature") { return judged }
            let honest = try signIn(user, in: after, credential: user.credential)
            if !honest.answerIsYes {
                return (.accepted, "after a refused sign-in (\(answer.shown)) carrying the next count, the honest sign-in with that count was refused (\(honest.answer.shown)): the refused response moved what the RP stored")
            }
            return (.rejected, answer.shown)
        case .otherUsersHandle:
            let owner = try userWithPasskey(), other = try userWithPasskey()
            guard let handle = other.handle else { throw Stop("the RP's registration options name no user.id") }
            let browser = try RPSession(base: base, pacer: pacer)
            defer { exchanges += browser.exchanges }
            let options = try beginSignIn(owner, in: browser)
            let made = try respond(toSignIn: options, credential: owner.credential, fault: nil)
            var json = made.json
            if case .object(var members) = json, case .object(var response)? = members["response"] {
                response["userHandle"] = .string(handle)
                members["response"] = .object(response)
                json = .object(members)
            }
            let answer = try finish(profile.signIn, json, in: browser)
            return try verdict(of: answer, "\(owner.name)'s passkey with \(other.name)'s userHandle") ?? probeSignIn(browser, other, refusal: answer)
        case .distinctChallenges:
            let user = try userWithPasskey()
            let first = try RPSession(base: base, pacer: pacer), second = try RPSession(base: base, pacer: pacer)
            defer { exchanges += first.exchanges + second.exchanges }
            let challenges = try [first, second].map { browser throws -> [UInt8] in
                let options = try beginSignIn(user, in: browser)
                guard case .string(let text)? = options.json.member("challenge"), let bytes = Base64URL.decode(text) else {
                    throw Stop("the sign-in options have no base64url challenge")
                }
                return bytes
            }
            if challenges[0] == challenges[1] { return (.accepted, "two begins gave the same challenge (\(Base64URL.encode(challenges[0])))") }
            if let short = challenges.first(where: { $0.count < 16 }) { return (.accepted, "a challenge of \(short.count) bytes (at least 16: §13.4.3)") }
            return (.rejected, "two challenges of \(challenges[0].count) and \(challenges[1].count) bytes, distinct")
        case .excludesExisting:
            let user = try userWithPasskey()
            defer { exchanges += user.browser.exchanges }
            let options = try beginRegistration(user, in: user.browser)
            guard case .array(let excluded)? = options.json.member("excludeCredentials"),
                  excluded.contains(where: { $0.member("id") == .string(user.credential) }) else {
                return (.accepted, "the user's registration options do not exclude its passkey \(user.credential)")
            }
            return (.rejected, "excludeCredentials lists the user's passkey")
        case .registerEdit, .registerOwn, .signOwn, .registerCrossOrigin, .signCrossOrigin, .userEnumeration:
            return try judgeForgery(c, exchanges: &exchanges)
        case .discoverable(let kind):
            return try judgeDiscoverable(kind, exchanges: &exchanges)
        case .counterRegress:
            let user = try userWithPasskey(counting: true)
            let first = try RPSession(base: base, pacer: pacer)
            let signed = try signIn(user, in: first, credential: user.credential)
            guard signed.answerIsYes else { throw Stop("the honest sign-in was refused: \(signed.answer.shown)") }
            let browser = try RPSession(base: base, pacer: pacer)
            defer { exchanges += browser.exchanges }
            let options = try beginSignIn(user, in: browser)
            let made = try respond(toSignIn: options, credential: user.credential, fault: .counterRegress)
            let answer = try finish(profile.signIn, made.json, in: browser)
            return try verdict(of: answer, "the finish") ?? probeSignIn(browser, user, refusal: answer)
        }
    }

    /// After a refused registration: the credential must not sign in.
    func probeRegistration(_ user: User, credential: String, refusal: RPSession.Answer) throws -> (AuditReport.Verdict, String) {
        let browser = try RPSession(base: base, pacer: pacer)
        let options: BeginOptions
        do { options = try beginSignIn(user, in: browser) } catch let stop as Stop {
            // An RP that will not begin a sign-in for the user kept no passkey it can use.
            return (.rejected, "\(refusal.shown) (and no sign-in begins for the user: \(stop.reason))")
        }
        let made = try respond(toSignIn: options, credential: credential, fault: nil)
        let answer = try finish(profile.signIn, made.json, in: browser)
        if isYes(answer, profile.success) {
            return (.accepted, "the RP refused the registration (\(refusal.shown)) but then signed in with its credential (\(answer.shown))")
        }
        return (.rejected, refusal.shown)
    }

    /// After a refused sign-in: the browser must not be signed in.
    func probeSignIn(_ browser: RPSession, _ user: User, refusal: RPSession.Answer) throws -> (AuditReport.Verdict, String) {
        // Without a signed-in page the refusal is all there is to judge (the conformance API's shape):
        // rejected, and the evidence says it was not probed.
        guard let signedIn = profile.signedIn else { return (.rejected, "refused (\(refusal.shown)), not probed: \(AuditProfile.Lack.signedIn.reason)") }
        if try isSignedIn(browser, as: user) {
            return (.accepted, "the RP refused the sign-in (\(refusal.shown)) but the session is signed in (\(signedIn.path))")
        }
        return (.rejected, refusal.shown)
    }

    // MARK: - Users and ceremonies

    struct User {
        let name: String
        let password: String
        let browser: RPSession
        var credential = ""
        /// `user.id` of its registration options.
        var handle: String?
    }

    /// A new user, signed up (its browser signed in).
    func newUser() throws -> User {
        userCount += 1
        let user = User(name: "audit-\(runId)-\(userCount)", password: "pw-\(runId)-\(userCount)-A9!", browser: try RPSession(base: base, pacer: pacer))
        // Without a sign-up, the user comes into being at the registration's begin.
        guard let signUp = profile.signUp else { return user }
        let answer = try user.browser.send(signUp, values(user))
        guard (200..<300).contains(answer.status) else { throw Stop("\(signUp.path) did not make a user: \(answer.shown)") }
        return user
    }

    /// A new user with a passkey the RP accepted.
    func userWithPasskey(counting: Bool = false) throws -> User {
        var user = try newUser()
        let made = try register(user, in: user.browser, counting: counting)
        guard made.answerIsYes else { throw Stop("the honest registration was refused: \(made.answer.shown)") }
        user.credential = made.response.credentialId
        if case .string(let id)? = made.options.member("user.id") { user.handle = id }
        return user
    }

    /// The user's password sign-in in a new browser.
    private func logIn(_ user: User) throws -> RPSession {
        guard let logIn = profile.logIn else { throw Stop(AuditProfile.Lack.logIn.reason) }
        let browser = try RPSession(base: base, pacer: pacer)
        let answer = try browser.send(logIn, values(user))
        guard (200..<300).contains(answer.status) else { throw Stop("\(logIn.path) did not sign the user in: \(answer.shown)") }
        return browser
    }

    func values(_ user: User, response: JSONValue? = nil) -> [String: JSONValue] {
        var out: [String: JSONValue] = ["user": .string(user.name), "password": .string(user.password)]
        if let response { out["response"] = response }
        return out
    }

    /// The options a begin answered, as the RP wrote them.
    struct BeginOptions {
        let json: JSONValue
        var userVerification: String? {
            if case .string(let v)? = json.member("userVerification") ?? json.member("authenticatorSelection.userVerification") { return v }
            return nil
        }
    }

    func options(of answer: RPSession.Answer, _ ceremony: AuditProfile.Ceremony) throws -> BeginOptions {
        // A 5xx is a server error wherever it comes; an answer the profile does not describe
        // leaves the case unjudged (and fails the baseline).
        if answer.status >= 500 { throw AuditError(.rpUnusable, "\(ceremony.begin.path): \(answer.shown)") }
        guard (200..<300).contains(answer.status) else { throw Stop("\(ceremony.begin.path): \(answer.shown)") }
        guard let json = answer.json, let options = json.member(ceremony.options), case .object = options else {
            throw Stop("\(ceremony.begin.path) answered no options at '\(ceremony.options)': \(answer.shown)")
        }
        return BeginOptions(json: options)
    }

    func beginRegistration(_ user: User, in browser: RPSession) throws -> BeginOptions {
        try options(of: try browser.send(profile.register.begin, values(user)), profile.register)
    }

    func beginSignIn(_ user: User, in browser: RPSession) throws -> BeginOptions {
        try options(of: try browser.send(profile.signIn.begin, values(user)), profile.signIn)
    }

    struct Made {
        let json: JSONValue
        let credentialId: String
    }

    /// A registration answering `options` (from a frame on `topOrigin`, when given: crossOrigin).
    func respond(toRegistration options: BeginOptions, fault: Fault?, counting: Bool = false, topOrigin: String? = nil) throws -> Made {
        let response = try authenticator.register(RegisterRequest(
            caller: CallerContext(origin: profile.origin, topOrigin: topOrigin), options: .json(Array(JSONOutput.string(options.json).utf8)),
            person: PersonRequest(pin: Self.pin), passkey: PasskeySettings(signatureCounter: counting), fault: fault))
        return try made(response)
    }

    /// A sign-in with `credential` (the RP's allow list replaced by it: the attacker's own
    /// authenticator answers as it likes).
    func respond(toSignIn options: BeginOptions, credential: String, fault: Fault?, topOrigin: String? = nil) throws -> Made {
        var json = options.json
        if case .object(var members) = json {
            members["allowCredentials"] = .array([.object(["type": .string("public-key"), "id": .string(credential)])])
            json = .object(members)
        }
        let response = try authenticator.sign(SignRequest(caller: CallerContext(origin: profile.origin, topOrigin: topOrigin),
                                                          options: .json(Array(JSONOutput.string(json).utf8)),
                                                          person: PersonRequest(pin: Self.pin), fault: fault))
        return try made(response)
    }

    func made(_ response: CeremonyResponse) throws -> Made {
        guard let json = JSONValue(parsing: response.json), case .string(let id)? = json.member("id") else {
            throw Stop("the authenticator's response is not JSON with an id")
        }
        return Made(json: json, credentialId: id)
    }

    struct Ceremony {
        let options: JSONValue
        let response: Made
        let answer: RPSession.Answer
        let answerIsYes: Bool
    }

    func register(_ user: User, in browser: RPSession, counting: Bool = false) throws -> Ceremony {
        let options = try beginRegistration(user, in: browser)
        let made = try respond(toRegistration: options, fault: nil, counting: counting)
        let answer = try finish(profile.register, made.json, in: browser)
        return Ceremony(options: options.json, response: made, answer: answer, answerIsYes: isYes(answer, profile.success))
    }

    func signIn(_ user: User, in browser: RPSession, credential: String) throws -> Ceremony {
        let options = try beginSignIn(user, in: browser)
        let made = try respond(toSignIn: options, credential: credential, fault: nil)
        let answer = try finish(profile.signIn, made.json, in: browser)
        return Ceremony(options: options.json, response: made, answer: answer, answerIsYes: isYes(answer, profile.success))
    }

    func finish(_ ceremony: AuditProfile.Ceremony, _ response: JSONValue, in browser: RPSession) throws -> RPSession.Answer {
        try browser.send(ceremony.finish, ["response": response])
    }

    func isSignedIn(_ browser: RPSession, as user: User) throws -> Bool {
        guard let signedIn = profile.signedIn else { throw Stop(AuditProfile.Lack.signedIn.reason) }
        return isYes(try browser.send(signedIn, values(user)), profile.signedInSuccess)
    }

    func isYes(_ answer: RPSession.Answer, _ success: AuditProfile.Success) -> Bool {
        success.holds(status: answer.status, json: answer.json, text: answer.text, setCookies: answer.setCookies)
    }

    /// A valid response's JSON envelope with one thing changed.
    static func change(_ json: JSONValue, _ change: AuditCase.Envelope) -> JSONValue {
        guard case .object(var members) = json else { return json }
        switch change {
        case .idNotRawId: members["id"] = .string("AAAAAAAAAAAAAAAAAAAAAA")
        case .wrongType: members["type"] = .string("public-key-x")
        case .idMissing: members["id"] = nil
        case .idNotBase64URL: members["id"] = .string("!!not+base64/url==")
        case .rawIdNotBase64URL: members["rawId"] = .string("!!not+base64/url==")
        case .emptySignature, .clientDataChanged:
            guard case .object(var response)? = members["response"] else { break }
            if change == .emptySignature {
                response["signature"] = .string("")
            } else if case .string(let text)? = response["clientDataJSON"], let bytes = Base64URL.decode(text),
                      case .object(var clientData)? = JSONValue(parsing: String(decoding: bytes, as: UTF8.self)) {
                clientData["extra"] = .string("not signed")
                response["clientDataJSON"] = .string(Base64URL.encode(Array(JSONOutput.string(JSONValue.object(clientData)).utf8)))
            }
            members["response"] = .object(response)
        }
        return .object(members)
    }
}

extension RPSession.Answer {
    /// The answer in a line: its status and the start of its body.
    var shown: String {
        let body = text.count > 200 ? String(text.prefix(200)) + "…" : text
        return "\(status) \(body.replacingOccurrences(of: "\n", with: " "))"
    }
}
