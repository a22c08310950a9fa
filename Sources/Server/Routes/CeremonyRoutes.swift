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
            var (caller, person, options, body) = try Self.ceremonyInput(call)
            let fault = try body.choice("fault", Fault.self), via = try body.string("via")
            if caller.mediation == .conditional {
                // Pending, holding nothing, until the person picks a passkey from the autofill list.
                let hosted = try s.hosted(call.parameter("account"))
                let device = call.parameter("device")
                switch try hosted.autofill.wait(device: device, timeout: Self.timeout(of: options), clock: hosted.session.clock) {
                case .picked(let choice): person.account = choice
                case .timedOut:
                    person.action = .timeout
                    person.instantTimeout = true  // the timeout has passed already
                case .canceled:
                    person.action = .cancel
                }
            }
            let chosen = person
            return try s.onDevice(call) { hosted, device throws(Problem) in
                let response = try session { () throws(SessionError) in
                    try hosted.session.sign(SignRequest(device: device, via: via, caller: caller, options: .json(options), person: chosen, fault: fault))
                }
                hosted.events.emit("credentialAsserted", CredentialEventData(device: via ?? device, response.credential, time: hosted.now))
                return .json(200, response.json)
            }
        }
        router.add("GET", "/accounts/{account}/devices/{device}/autofill") { s, call throws(Problem) in
            let hosted = try s.hosted(call.parameter("account"))
            return .encoded(200, ["pending": hosted.autofill.isPending(device: call.parameter("device"))])
        }
        router.add("POST", "/accounts/{account}/devices/{device}/autofill") { s, call throws(Problem) in
            let body = try call.body(allowed: ["credentialId", "user", "cancel"])
            let hosted = try s.hosted(call.parameter("account"))
            let pick: AutofillPicks.Outcome
            if try body.bool("cancel") == true {
                pick = .canceled
            } else {
                let id = try body.base64URL("credentialId"), user = try body.string("user")
                guard id != nil || user != nil else { throw Problem.input("the body names the passkey picked (credentialId or user), or cancel") }
                pick = .picked(AccountChoice(credentialId: id, user: user))
            }
            guard hosted.autofill.pick(pick, device: call.parameter("device")) else {
                throw Problem(409, "usage", "no conditional sign-in is pending on device \(JSONText.shown(call.parameter("device"))) (none came within 10 s)")
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

    /// The options' `timeout` (milliseconds), else five minutes, at most an hour.
    private static func timeout(of options: [UInt8]) -> UInt64 {
        let object = (try? JSONSerialization.jsonObject(with: Data(options))) as? [String: Any]
        let given = (object?["timeout"] as? NSNumber)?.doubleValue ?? 300_000
        return UInt64(min(max(given.isFinite ? given : 300_000, 0), 3_600_000))
    }
}

/// The conditional sign-ins pending on an account's devices (one per device, as a page has one
/// autofill request at a time), and the picks that end them.
final class AutofillPicks: @unchecked Sendable {
    enum Outcome {
        case picked(AccountChoice)
        case timedOut
        case canceled
    }

    private final class Pending {
        var outcome: Outcome?
    }

    private let condition = NSCondition()
    private var pending = [String: Pending]()
    private var closed = false

    /// How many can be pending on the whole server at once: each holds one of its threads.
    static let limit = 4
    private static let serverWide = NSCondition()
    nonisolated(unsafe) private static var waiting = 0

    /// Waits, holding no lock of the account, for a pick on `device`, or for `timeout`
    /// milliseconds to pass (on the virtual clock when there is one).
    func wait(device: String, timeout: UInt64, clock: VirtualClock?) throws(Problem) -> Outcome {
        Self.serverWide.lock()
        guard Self.waiting < Self.limit else {
            Self.serverWide.unlock()
            throw Problem(409, "usage", "\(Self.limit) conditional sign-ins are pending already (each holds a server thread until its pick)")
        }
        Self.waiting += 1
        Self.serverWide.unlock()
        defer { Self.serverWide.lock(); Self.waiting -= 1; Self.serverWide.unlock() }

        condition.lock()
        defer { condition.unlock() }
        guard !closed else { return .canceled }
        guard pending[device] == nil else {
            throw Problem(409, "usage", "a conditional sign-in is pending on device \(JSONText.shown(device)) already")
        }
        let mine = Pending()
        pending[device] = mine
        condition.broadcast()
        defer { if pending[device] === mine { pending[device] = nil } }
        let start = clock?.now ?? 0
        let deadline = Date(timeIntervalSinceNow: Double(timeout) / 1000)
        while mine.outcome == nil {
            if closed { return .canceled }
            if let clock {
                if clock.now - start >= timeout { return .timedOut }
                _ = condition.wait(until: Date(timeIntervalSinceNow: 0.05))  // the clock moves with a request
            } else {
                if !condition.wait(until: deadline) && mine.outcome == nil { return .timedOut }
            }
        }
        return mine.outcome!
    }

    /// Ends the sign-in pending on `device` with `outcome`, waiting up to 10 s for one to begin
    /// (a test starts the sign-in and picks at once); `false` when none did.
    func pick(_ outcome: Outcome, device: String) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: 10)
        while pending[device] == nil || pending[device]?.outcome != nil {
            if closed || !condition.wait(until: deadline) { return false }
        }
        pending[device]!.outcome = outcome
        pending[device] = nil
        condition.broadcast()
        return true
    }

    func isPending(device: String) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return pending[device] != nil
    }

    /// Cancels every pending sign-in (the account ends, or the server stops).
    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }
}
