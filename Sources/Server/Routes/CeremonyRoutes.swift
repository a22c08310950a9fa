import Foundation
import Session

/// `…/devices/{device}/register` and `…/sign`: `navigator.credentials.create()` and `.get()` on a
/// device, answered with the response JSON a browser hands the page; `…/autofill`: the person
/// picking a passkey from the autofill list of a conditional sign-in that is pending, and the
/// page withdrawing its own.
extension AccountService {
    func addCeremonyRoutes(to router: inout Router<AccountService>) {
        router.add("POST", "/accounts/{account}/devices/{device}/register", body: Body.Ceremony.self) { s, call, body throws(Problem) in
            let (caller, given, options) = Self.ceremonyInput(body)
            guard body.request == nil else { throw Problem.input("request names a conditional sign-in's page: a registration takes none") }
            let fault = body.fault?.value, via = body.via
            var passkey = PasskeySettings()
            passkey.profile = body.profile
            let deviceBound = body.deviceBound
            return try s.onDevice(call) { hosted, device throws(Problem) in
                var passkey = passkey
                passkey.deviceBound = deviceBound ?? hosted.deviceBoundByDefault
                passkey.signatureCounter = hosted.countsSignaturesByDefault
                let queued = given == nil ? hosted.people.peek(device: device) : nil
                let person = given ?? queued ?? PersonRequest()
                let response = try Self.acting(queued, on: device, in: hosted) { () throws(SessionError) in
                    try hosted.session.register(RegisterRequest(device: device, via: via, caller: caller, options: .json(options), person: person,
                                                                passkey: passkey, fault: fault))
                }
                hosted.events.emit(.credentialAdded, CredentialEventData(device: via ?? device, response.credential, time: hosted.now))
                return .ceremony(response)
            }
        }
        router.add("POST", "/accounts/{account}/devices/{device}/sign", body: Body.Ceremony.self) { s, call, body throws(Problem) in
            let (caller, given, options) = Self.ceremonyInput(body)
            let fault = body.fault?.value, via = body.via
            // The person: the body's, else the next one queued for the device, else the default;
            // answered as a sign-in by `ceremony` — the sign-in itself, or a conditional one's pick.
            let signed = { @Sendable (ceremony: (HostedAccount, String, PersonRequest) throws(SessionError) -> CeremonyResponse) throws(Problem) -> HTTPResponse in
                try s.onDevice(call) { hosted, device throws(Problem) in
                    let queued = given == nil ? hosted.people.peek(device: device) : nil
                    let response = try Self.acting(queued, on: device, in: hosted) { () throws(SessionError) in
                        try ceremony(hosted, device, given ?? queued ?? PersonRequest())
                    }
                    hosted.events.emit(.credentialAsserted, CredentialEventData(device: via ?? device, response.credential, time: hosted.now))
                    return .ceremony(response)
                }
            }
            guard caller.mediation == .conditional else {
                guard body.request == nil else { throw Problem.input("request names a conditional sign-in's page: this sign-in is not conditional") }
                return try signed { hosted, device, person throws(SessionError) in
                    try hosted.session.sign(SignRequest(device: device, via: via, caller: caller, options: .json(options), person: person, fault: fault))
                }
            }
            let owner = try Self.owner(of: body.request, origin: caller.origin)
            // Begun as the browser begins it — what it refuses at once (a cross-origin frame,
            // another site's RP ID, the options' own errors) is answered at once — then pending,
            // holding no thread and no lock, until the person acts on the autofill list (or the
            // timeout, its page or the account ends it); a pick is then signed as usual.
            let deferred = HTTPDeferred(), shown = JSONText.shown(call.parameter("device"))
            var began: ConditionalSignIn?
            _ = try s.onDevice(call) { hosted, device throws(Problem) in
                guard try hosted.autofill.admit(device: device, owner: owner) else { return .noContent }
                let signIn = try session { () throws(SessionError) in
                    try hosted.session.beginConditional(SignRequest(device: device, via: via, caller: caller, options: .json(options), fault: fault))
                }
                began = signIn
                hosted.autofill.begin(signIn, device: device, owner: owner, clock: hosted.session.clock) { outcome in
                    switch outcome {
                    case .picked(let choice):
                        do throws(Problem) {
                            deferred.complete(try signed { _, _, person throws(SessionError) in try signIn.pick(choice, person: person) })
                        } catch { deferred.complete(error.response) }
                    case .timedOut:
                        deferred.complete(Problem(signIn.timeOut()).response)
                    case .dismissed:
                        // Pending until its timeout, which a request holding a connection does not wait
                        // for: ended as the client ends a dismissed conditional request.
                        try? signIn.dismiss()
                        deferred.complete(Problem(signIn.timeOut()).response)
                    case .canceled:
                        deferred.complete(Problem(signIn.cancel("its account ended, or the server stops")).response)
                    case .superseded(let other):
                        // Over for this page, as a browser's request in a tab the person left: the
                        // bridge keeps the page's promise pending (docs/browser.md).
                        signIn.cancel("another page's conditional sign-in has the autofill list")
                        deferred.complete(Problem(410, .usage, "the conditional sign-in was superseded: \(Self.described(other)) has the autofill list of device \(shown) now").response)
                    case .withdrawn:
                        signIn.cancel("its page withdrew it")
                        deferred.complete(Self.withdrawn.response)
                    }
                }
                return .noContent
            }
            // Its page withdrew it before it began: over at once.
            guard began != nil else { return Self.withdrawn.response }
            return HTTPResponse(status: 200, contentType: .none, body: [], deferred: deferred)
        }
        router.add("GET", "/accounts/{account}/devices/{device}/person") { s, call throws(Problem) in
            try s.onDevice(call) { hosted, device throws(Problem) in .encoded(200, ["queued": hosted.people.waiting(device: device).map(PersonReport.init)]) }
        }
        router.add("POST", "/accounts/{account}/devices/{device}/person", body: Body.Person.self) { s, call, body throws(Problem) in
            guard let person = Self.person(action: body.userAction, pin: body.pin, credentialId: body.credentialId, user: body.user) else {
                throw Problem.input("the body says what the person does: userAction, pin, credentialId or user")
            }
            return try s.onDevice(call) { hosted, device throws(Problem) in .encoded(200, ["queued": try hosted.people.add(person, device: device)]) }
        }
        router.add("DELETE", "/accounts/{account}/devices/{device}/person") { s, call throws(Problem) in
            try s.onDevice(call) { hosted, device throws(Problem) in
                hosted.people.clear(device: device)
                return .noContent
            }
        }
        router.add("GET", "/accounts/{account}/devices/{device}/autofill") { s, call throws(Problem) in
            try s.onDevice(call) { hosted, device throws(Problem) in
                guard let (owner, signIn) = hosted.autofill.pending(device: device), [.pending, .dismissed].contains(signIn.state) else {
                    return .encoded(200, AutofillReport(pending: false, request: nil, offered: nil))
                }
                // What the list shows: the authenticator's own candidates for the request.
                let offered = try session { () throws(SessionError) in try signIn.offered() }
                return .encoded(200, AutofillReport(pending: true, request: owner, offered: offered.map(AutofillOfferReport.init)))
            }
        }
        router.add("POST", "/accounts/{account}/devices/{device}/autofill", body: Body.AutofillPick.self) { s, call, body throws(Problem) in
            let wait = body.wait?.milliseconds ?? 2_000
            guard wait <= 60_000 else { throw Problem.input("wait is at most 60 s") }
            let request = try body.request.map { id throws(Problem) in try Self.identifier(id, "request") }
            let hosted = try s.hosted(call.parameter("account"))
            _ = try s.onDevice(call) { _, _ throws(Problem) in .noContent }  // a device of the account's, or 404
            let pick: AutofillPicks.Outcome
            if body.cancel == true {
                pick = .dismissed
            } else {
                let id = body.credentialId?.bytes, user = body.user
                guard id != nil || user != nil else { throw Problem.input("the body names the passkey picked (credentialId or user), or cancel") }
                pick = .picked(AccountChoice(credentialId: id, user: user))
            }
            // Answered when a sign-in pending on the device takes the pick, or when the wait ends;
            // meanwhile the request holds no thread (its connection waits, as a pending sign-in's does).
            let device = call.parameter("device"), deferred = HTTPDeferred()
            hosted.autofill.pick(pick, device: device, request: request, wait: UInt64(wait)) { taken in
                let which = request.map { "conditional sign-in \(JSONText.shown($0)) is not" } ?? "no conditional sign-in is"
                deferred.complete(taken ? .encoded(200, ["picked": true])
                    : Problem(409, .usage, "\(which) pending on device \(JSONText.shown(device)) (none began within the wait, \(wait) ms)").response)
            }
            return HTTPResponse(status: 200, contentType: .none, body: [], deferred: deferred)
        }
        // The page withdraws its own request — it aborted it, or it goes away (the bridge asks on
        // `pagehide`) — so that the next pick goes to the page the person sees.
        router.add("DELETE", "/accounts/{account}/devices/{device}/autofill") { s, call throws(Problem) in
            guard call.query.keys.allSatisfy({ $0 == "request" }), let id = call.query["request"] else {
                throw Problem.input("DELETE …/autofill?request=ID: the conditional sign-in its page withdraws")
            }
            let request = try Self.identifier(id, "request")
            return try s.onDevice(call) { hosted, device throws(Problem) in
                .encoded(200, ["ended": hosted.autofill.withdraw(device: device, request: request)])
            }
        }
    }

    /// What both ceremonies read: the caller (origin, top origin, mediation), the person (action,
    /// PIN, account picked; `nil` when the body says nothing of them), and the options JSON.
    private static func ceremonyInput(_ body: Body.Ceremony) -> (CallerContext, PersonRequest?, [UInt8]) {
        var caller = CallerContext(origin: body.origin, topOrigin: body.topOrigin)
        if let mediation = body.mediation { caller.mediation = mediation.value }
        caller.recentPasswordSignIn = body.recentPasswordSignIn ?? false
        // What a page knows of itself (the page bridge sends them): whether its frame is allowed
        // the call, whether the user just clicked, and a sign-in's uiMode (an unknown one ignored,
        // as the browser ignores it).
        caller.framePermission = body.framePermission ?? true
        caller.userActivation = body.userActivation ?? true
        caller.uiMode = body.uiMode.flatMap(UIMode.init(rawValue:))
        return (caller, person(action: body.userAction, pin: body.pin, credentialId: body.credentialId, user: body.user), body.options.bytes)
    }

    /// The person a body describes — `userAction`, `pin`, and the passkey picked (`credentialId`
    /// or `user`) — or `nil` when it names none of them.
    static func person(action: Choice<UserAction>?, pin: String?, credentialId: Base64URLBytes?, user: String?) -> PersonRequest? {
        guard pin != nil || action != nil || credentialId != nil || user != nil else { return nil }
        var person = PersonRequest(pin: pin)
        if let action { person.action = action.value }
        if credentialId != nil || user != nil { person.account = AccountChoice(credentialId: credentialId?.bytes, user: user) }
        return person
    }

    /// Runs a ceremony for which `queued` (when not `nil`) was the person queued for `device`: it
    /// leaves the queue once the person was asked — the ceremony succeeded, or ended in what the
    /// person did (cancel, a wrong PIN, a timeout, a lockout) — and stays for the next one when
    /// the request failed before any prompt (a SecurityError, a TypeError, an excluded passkey…).
    private static func acting<T>(_ queued: PersonRequest?, on device: String, in hosted: HostedAccount,
                                  _ ceremony: () throws(SessionError) -> T) throws(Problem) -> T {
        do {
            let done = try ceremony()
            if queued != nil { _ = hosted.people.next(device: device) }
            return done
        } catch {
            if queued != nil, error.name.askedThePerson { _ = hosted.people.next(device: device) }
            throw Problem(error)
        }
    }

    /// Whose conditional sign-in it is: the caller's origin and the body's `request` — `{"id",
    /// "page", "url"}`, which the page bridge sends: the request's id and its page's (each 1–128
    /// printable ASCII characters) and the page's URL (at most 4,096 characters).
    private static func owner(of request: Body.Ceremony.Request?, origin: String) throws(Problem) -> AutofillPicks.Owner {
        var owner = AutofillPicks.Owner(origin: origin)
        guard let request else { return owner }
        owner.id = try identifier(request.id, "request.id")
        owner.page = try request.page.map { page throws(Problem) in try identifier(page, "request.page") }
        if let url = request.url {
            guard url.count <= 4_096 else { throw Problem.input("request.url is at most 4,096 characters") }
            owner.url = url
        }
        return owner
    }

    /// An id a page makes up for itself: 1–128 printable ASCII characters.
    private static func identifier(_ text: String, _ what: String) throws(Problem) -> String {
        guard (1...128).contains(text.utf8.count), text.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw Problem.input("\(what) must be 1 to 128 printable ASCII characters, not '\(JSONText.shown(text))'")
        }
        return text
    }

    /// A request's owner as a message names it.
    private static func described(_ owner: AutofillPicks.Owner) -> String {
        let page = owner.url.map { " of page \(JSONText.shown($0))" } ?? " from \(JSONText.shown(owner.origin))"
        return (owner.id.map { "request \(JSONText.shown($0))" } ?? "a request") + page
    }

    /// A conditional sign-in its page withdrew: over.
    private static let withdrawn = Problem(410, .usage, "the conditional sign-in was withdrawn by its page (aborted, or the page went away)")
}

/// A queued person as `GET …/person` lists it: the members a ceremony's body would carry.
struct PersonReport: Encodable {
    let userAction: String
    let pin: String?
    let credentialId: String?
    let user: String?

    init(_ person: PersonRequest) {
        userAction = person.action.rawValue
        pin = person.pin
        credentialId = person.account.credentialId.map(Base64URL.encode)
        user = person.account.user
    }
}

/// `GET …/autofill`: whether a conditional sign-in is pending, whose request it is, and what its
/// list offers.
struct AutofillReport: Encodable {
    let pending: Bool
    let request: AutofillPicks.Owner?
    let offered: [AutofillOfferReport]?
}
