import Foundation
import Keychain
import Session
import VirtualAuthenticator

/// `…/devices/{device}/register` and `…/sign`: `navigator.credentials.create()` and `.get()` on a
/// device, answered with the response JSON a browser hands the page; `…/autofill`: the person
/// picking a passkey from the autofill list of a conditional sign-in that is pending.
extension AccountService {
    static let ceremonyMembers: Set<String> = ["options", "origin", "topOrigin", "mediation", "userAction", "pin", "fault", "profile", "via",
                                               "credentialId", "user", "recentPasswordSignIn", "deviceBound"]

    func addCeremonyRoutes(to router: inout Router<AccountService>) {
        router.add("POST", "/accounts/{account}/devices/{device}/register") { s, call throws(Problem) in
            let (caller, person, options, body) = try Self.ceremonyInput(call)
            let fault = try body.choice("fault", Fault.self), via = try body.string("via")
            var passkey = PasskeySettings()
            passkey.profile = try body.string("profile")
            let deviceBound = try body.bool("deviceBound")
            return try s.onDevice(call) { hosted, device throws(Problem) in
                var passkey = passkey
                passkey.deviceBound = deviceBound ?? hosted.deviceBoundByDefault
                let response = try session { () throws(SessionError) in
                    try hosted.session.register(RegisterRequest(device: device, via: via, caller: caller, options: .json(options), person: person,
                                                                passkey: passkey, fault: fault))
                }
                hosted.events.emit("credentialAdded", CredentialEventData(device: via ?? device, response.credential, time: hosted.now))
                return .json(200, response.json)
            }
        }
        router.add("POST", "/accounts/{account}/devices/{device}/sign") { s, call throws(Problem) in
            let (caller, person, options, body) = try Self.ceremonyInput(call)
            let fault = try body.choice("fault", Fault.self), via = try body.string("via")
            let sign = { @Sendable (person: PersonRequest) throws(Problem) -> HTTPResponse in
                try s.onDevice(call) { hosted, device throws(Problem) in
                    let response = try session { () throws(SessionError) in
                        try hosted.session.sign(SignRequest(device: device, via: via, caller: caller, options: .json(options), person: person, fault: fault))
                    }
                    hosted.events.emit("credentialAsserted", CredentialEventData(device: via ?? device, response.credential, time: hosted.now))
                    return .json(200, response.json)
                }
            }
            guard caller.mediation == .conditional else { return try sign(person) }
            // Pending, holding no thread and no lock, until the person picks a passkey from the
            // autofill list (or the timeout, or the account's end); then signed as usual.
            let hosted = try s.hosted(call.parameter("account"))
            _ = try s.onDevice(call) { _, _ throws(Problem) in .noContent }  // a device of the account's, or 404
            let deferred = HTTPDeferred()
            try hosted.autofill.begin(device: call.parameter("device"), timeout: Self.timeout(of: options), clock: hosted.session.clock) { outcome in
                var chosen = person
                switch outcome {
                case .picked(let choice): chosen.account = choice
                case .timedOut:
                    chosen.action = .timeout
                    chosen.instantTimeout = true  // the timeout has passed already
                case .dismissed:
                    // Ended as the client ends a dismissed conditional request.
                    chosen.action = .cancel
                    chosen.instantTimeout = true
                case .canceled:
                    deferred.complete(Problem(SessionError(.canceled, "the conditional sign-in was canceled: its account ended, or the server stops")).response)
                    return
                }
                do throws(Problem) { deferred.complete(try sign(chosen)) } catch { deferred.complete(error.response) }
            }
            return HTTPResponse(status: 200, contentType: .none, body: [], deferred: deferred)
        }
        router.add("GET", "/accounts/{account}/devices/{device}/autofill") { s, call throws(Problem) in
            try s.onDevice(call) { hosted, device throws(Problem) in .encoded(200, ["pending": hosted.autofill.isPending(device: device)]) }
        }
        router.add("POST", "/accounts/{account}/devices/{device}/autofill") { s, call throws(Problem) in
            let body = try call.body(allowed: ["credentialId", "user", "cancel", "wait"])
            let wait = try Self.duration(body, "wait") ?? 2_000
            guard wait <= 60_000 else { throw Problem.input("wait is at most 60 s") }
            let hosted = try s.hosted(call.parameter("account"))
            _ = try s.onDevice(call) { _, _ throws(Problem) in .noContent }  // a device of the account's, or 404
            let pick: AutofillPicks.Outcome
            if try body.bool("cancel") == true {
                pick = .dismissed
            } else {
                let id = try body.base64URL("credentialId"), user = try body.string("user")
                guard id != nil || user != nil else { throw Problem.input("the body names the passkey picked (credentialId or user), or cancel") }
                pick = .picked(AccountChoice(credentialId: id, user: user))
            }
            guard hosted.autofill.pick(pick, device: call.parameter("device"), wait: Double(wait) / 1000) else {
                throw Problem(409, "usage", "no conditional sign-in is pending on device \(JSONText.shown(call.parameter("device"))) (none began within the wait, \(wait) ms)")
            }
            return .encoded(200, ["picked": true])
        }
    }

    /// What both ceremonies read: the caller (origin, top origin, mediation), the person (action,
    /// PIN, account picked), and the options JSON.
    private static func ceremonyInput(_ call: Router<AccountService>.Call) throws(Problem) -> (CallerContext, PersonRequest, [UInt8], RequestBody) {
        let body = try call.body(allowed: ceremonyMembers)
        let options = try body.json(required: "options")
        var caller = CallerContext(origin: try body.string(required: "origin"), topOrigin: try body.string("topOrigin"))
        if let mediation = try body.choice("mediation", Mediation.self) { caller.mediation = mediation }
        caller.recentPasswordSignIn = try body.bool("recentPasswordSignIn") ?? false
        var person = PersonRequest(pin: try body.string("pin"))
        if let action = try body.choice("userAction", UserAction.self) { person.action = action }
        let id = try body.base64URL("credentialId"), user = try body.string("user")
        if id != nil || user != nil { person.account = AccountChoice(credentialId: id, user: user) }
        return (caller, person, options, body)
    }

    /// The timeout the browser gives the request: the options' `timeout` clamped as the client
    /// clamps it (10 s … 10 min), else five minutes.
    private static func timeout(of options: [UInt8]) -> UInt64 {
        let object = (try? JSONSerialization.jsonObject(with: Data(options))) as? [String: Any]
        guard let given = (object?["timeout"] as? NSNumber)?.doubleValue, given.isFinite else { return 300_000 }
        return UInt64(JSONReader.effectiveTimeout(UInt32(min(max(given.rounded(.towardZero), 0), Double(UInt32.max)))))
    }
}

/// The conditional sign-ins pending on an account's devices (one per device, as a page has one
/// autofill request at a time), each ended by the person's pick, its timeout (on the account's
/// clock: a virtual one moves with `POST …/clock`), a new PIN… or the account's end. A pending
/// sign-in holds no thread: its connection waits, and `finish` runs when it ends.
final class AutofillPicks: @unchecked Sendable {
    enum Outcome {
        case picked(AccountChoice)
        case timedOut
        /// The person dismissed the autofill list.
        case dismissed
        /// The account ended, or the server stops: the request is over.
        case canceled
    }

    private struct Pending {
        let serial: UInt64
        /// When it times out on the virtual clock (`nil`: the real clock's deadline only).
        let virtualDeadline: UInt64?
        let finish: @Sendable (Outcome) -> Void
    }

    private let condition = NSCondition()
    private var pending = [String: Pending]()
    private var serial: UInt64 = 0
    private var closed = false

    /// A real-time bound on a sign-in pending on a virtual clock that nobody moves.
    static let virtualClockBound: UInt64 = 3_600_000

    /// A conditional sign-in on `device` begins: `finish` runs (on another thread) with how it
    /// ends, after `timeout` milliseconds at the latest.
    func begin(device: String, timeout: UInt64, clock: VirtualClock?, finish: @escaping @Sendable (Outcome) -> Void) throws(Problem) {
        condition.lock()
        defer { condition.unlock() }
        guard !closed else { throw Problem.notFound("the account ended") }
        guard pending[device] == nil else {
            throw Problem(409, "usage", "a conditional sign-in is pending on device \(JSONText.shown(device)) already (a page has one at a time)")
        }
        serial += 1
        let mine = serial
        pending[device] = Pending(serial: mine, virtualDeadline: clock.map { $0.now &+ timeout }, finish: finish)
        condition.broadcast()
        let realTimeout = clock == nil ? timeout : max(timeout, Self.virtualClockBound)
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(realTimeout))) { [weak self] in
            self?.end(device: device, serial: mine, .timedOut)
        }
    }

    /// Ends the sign-in pending on `device` with `outcome`, waiting up to `wait` seconds for one
    /// to begin (a test starts the sign-in and picks at once); `false` when none did.
    func pick(_ outcome: Outcome, device: String, wait: Double) -> Bool {
        condition.lock()
        let deadline = Date(timeIntervalSinceNow: wait)
        while pending[device] == nil {
            if closed || !condition.wait(until: deadline) {
                condition.unlock()
                return false
            }
        }
        let ended = pending.removeValue(forKey: device)!
        condition.unlock()
        DispatchQueue.global().async { ended.finish(outcome) }
        return true
    }

    func isPending(device: String) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return pending[device] != nil
    }

    /// The virtual clock reads `now`: the sign-ins whose timeout has passed end.
    func clockMoved(to now: UInt64) {
        condition.lock()
        let due = pending.filter { $0.value.virtualDeadline.map { $0 <= now } ?? false }
        for device in due.keys { pending[device] = nil }
        condition.unlock()
        for (_, ended) in due { DispatchQueue.global().async { ended.finish(.timedOut) } }
    }

    private func end(device: String, serial: UInt64, _ outcome: Outcome) {
        condition.lock()
        guard let ended = pending[device], ended.serial == serial else { return condition.unlock() }
        pending[device] = nil
        condition.unlock()
        ended.finish(outcome)
    }

    /// Cancels every pending sign-in (the account ends, or the server stops).
    func close() {
        condition.lock()
        closed = true
        let all = pending
        pending = [:]
        condition.broadcast()
        condition.unlock()
        for (_, ended) in all { ended.finish(.canceled) }
    }
}
