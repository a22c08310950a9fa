import Foundation
import Keychain
import VirtualAuthenticator

/// A conditional sign-in (`mediation: "conditional"`, the page's autofill) that is pending: what
/// the page's `navigator.credentials.get()` is while the person has not picked. A front end holds
/// it (the command line for one command, a scenario across its steps, the server across requests)
/// and says what the person does: look at the list (``offered()``), pick a passkey from it
/// (``pick(_:person:)``: signed as any sign-in), or dismiss it (``dismiss()``). Credential
/// Management defines the rest: a dismissed list neither resolves nor rejects the call, which
/// stays pending until its timeout (on the account's clock) and then fails, as any call nobody
/// answered (NotAllowedError: `timedOut`). The next conditional sign-in on the device takes the
/// list, and this one is over (`canceled`).
///
///     let pending = try session.beginConditional(SignRequest(caller: caller, options: .json(options)))
///     let list = try pending.offered()                           // what the autofill list shows
///     let answer = try pending.pick(AccountChoice(credentialId: list[0].id))
public final class ConditionalSignIn: @unchecked Sendable {
    public enum State: Sendable, Equatable {
        /// The list is offered; nobody picked yet.
        case pending
        /// The person closed the list: nothing is picked, and the call stays pending until its timeout.
        case dismissed
        /// A passkey was picked: the call answered (the response, or its ceremony's error).
        case picked
        /// The timeout passed with nothing picked.
        case timedOut
        /// The next conditional sign-in on the device took the list, or the front end ended it.
        case canceled
    }

    private let session: Session
    /// The request, its options resolved (built options are built once, at the beginning).
    public let request: SignRequest
    /// The device whose browser asks (the one the request names, or the first).
    public let device: String
    /// The RP ID the client settled on.
    public let rpId: String
    /// The timeout the client gives the call: the options' own, clamped to 10 s … 10 min, else 5 min.
    public let timeout: UInt64
    /// When it times out, in milliseconds on the account's clock (virtual or real).
    public let deadline: UInt64
    private let lock = NSLock()
    private var current = State.pending
    private var reason = ""

    init(session: Session, request: SignRequest, device: String, rpId: String, timeout: UInt64) {
        self.session = session
        self.request = request
        self.device = device
        self.rpId = rpId
        self.timeout = timeout
        deadline = session.account.clock.milliseconds() &+ timeout
    }

    /// Where it is now; a pending or dismissed one whose deadline the account's clock has reached
    /// is `timedOut`.
    public var state: State {
        lock.lock()
        defer { lock.unlock() }
        return stateLocked()
    }

    /// What the autofill list shows: the authenticator's own candidates for the request (its
    /// rule: the RP's passkeys, only the allowed ones when it names some, less those hidden by a
    /// signal or held back by credProtect), oldest first — none when the allow list's transports
    /// do not reach the device, and none once the list is dismissed. Read now, so a passkey that
    /// syncs to the device meanwhile is offered from then on. An ended call throws how it ended.
    public func offered() throws(SessionError) -> [Credential] {
        switch state {
        case .pending: break
        case .dismissed: return []
        default: throw ended()
        }
        return try session.offers(request)
    }

    /// The person picks the passkey `choice` names from the list: signed as any sign-in, by
    /// `person` (default: the request's) with that account. A passkey the list does not offer
    /// cannot be picked (`notHandled`, and the call stays pending); once picked, the call is over
    /// whatever its ceremony answers.
    public func pick(_ choice: AccountChoice, person: PersonRequest? = nil) throws(SessionError) -> CeremonyResponse {
        guard choice.credentialId != nil || choice.user != nil else {
            throw SessionError(.usage, "a pick names the passkey picked: its credential id or its user")
        }
        let list = try offered()
        guard list.contains(where: choice.allows) else {
            // The first few, for a message of bounded length whatever the RP holds.
            let shown = list.prefix(5).map { "\(EchoedInput.base64URL($0.id)) (\(EchoedInput.text($0.userName)))" }.joined(separator: ", ")
            let offers = list.isEmpty ? "it offers none" : "it offers \(shown)" + (list.count > 5 ? " and \(list.count - 5) more" : "")
            throw SessionError(.notHandled, "the autofill list does not offer \(Self.described(choice)): \(offers)")
        }
        lock.lock()
        guard stateLocked() == .pending else {
            lock.unlock()
            throw ended()
        }
        current = .picked
        lock.unlock()
        var signing = request
        signing.person = person ?? request.person
        signing.person.account = choice
        return try session.sign(signing)
    }

    /// The person dismisses the list (a gesture outside it): nothing is picked, and the call stays
    /// pending until its timeout. An ended call throws how it ended.
    public func dismiss() throws(SessionError) {
        lock.lock()
        defer { lock.unlock() }
        switch stateLocked() {
        case .pending, .dismissed: current = .dismissed
        default: throw endedLocked()
        }
    }

    /// The person lets the time left pass (as the front end's people wait: in real time, at once,
    /// or on a virtual clock): the call ends `timedOut`, the error it rejects with.
    public func waitOut() -> SessionError {
        let left = deadline &- min(deadline, session.account.clock.milliseconds())
        if state == .pending || state == .dismissed, left > 0 {
            session.people.user(at: device, doing: request.person).wait(.milliseconds(left))
        }
        return timeOut()
    }

    /// Its timeout passed, as the front end's timer says (a server's real-time bound on a virtual
    /// clock nobody moves): ended `timedOut` unless it ended otherwise first. How it ended.
    @discardableResult
    public func timeOut() -> SessionError {
        lock.lock()
        defer { lock.unlock() }
        if current == .pending || current == .dismissed { current = .timedOut }
        return endedLocked()
    }

    /// Ends it `canceled`, for `why` (the next conditional sign-in took the list, its page went
    /// away, the account ends), unless it ended first. How it ended.
    @discardableResult
    public func cancel(_ why: String) -> SessionError {
        lock.lock()
        defer { lock.unlock() }
        if stateLocked() == .pending || current == .dismissed {
            current = .canceled
            reason = why
        }
        return endedLocked()
    }

    /// The error an ended call answers with.
    private func ended() -> SessionError {
        lock.lock()
        defer { lock.unlock() }
        return endedLocked()
    }

    private func endedLocked() -> SessionError {
        switch stateLocked() {
        case .timedOut:
            SessionError(.timedOut, "the conditional sign-in for \(EchoedInput.text(rpId)) stayed pending until its timeout (\(timeout) ms): nobody picked a passkey")
        case .canceled:
            SessionError(.canceled, "the conditional sign-in was canceled: \(reason)")
        case .picked:
            SessionError(.usage, "a passkey was picked already: the conditional sign-in is over")
        case .pending, .dismissed:
            SessionError(.usage, "the conditional sign-in is still pending")
        }
    }

    private func stateLocked() -> State {
        if current == .pending || current == .dismissed, session.account.clock.milliseconds() >= deadline { current = .timedOut }
        return current
    }

    private static func described(_ choice: AccountChoice) -> String {
        [choice.credentialId.map { "passkey \(EchoedInput.base64URL($0))" }, choice.user.map { "user \(EchoedInput.text($0))" }]
            .compactMap { $0 }.joined(separator: " of ")
    }
}

extension Session {
    /// A conditional sign-in (`request.caller.mediation` is `.conditional`) begins on its device:
    /// what the browser refuses at once (a cross-origin frame, another site's RP ID, the options'
    /// own errors) is thrown now; then it is pending, the value the front end holds. One that was
    /// pending on the same device is over (`canceled`): the newest request has the list.
    public func beginConditional(_ request: SignRequest) throws(SessionError) -> ConditionalSignIn {
        guard request.caller.mediation == .conditional else {
            throw SessionError(.usage, "only a sign-in with mediation conditional waits for a pick from the autofill list")
        }
        let json = optionsJSON(request.options)
        var resolved = request
        resolved.options = .json(json)
        let rpId = try checkSign(resolved)
        let device = try deviceName(request.device)
        let timeout = UInt64((try? RequestOptions(json: json))?.timeout ?? 300_000)
        let begun = ConditionalSignIn(session: self, request: resolved, device: device, rpId: rpId, timeout: timeout)
        conditionals[device]?.signIn?.cancel("the next conditional sign-in on device \(EchoedInput.text(device)) has the autofill list")
        conditionals[device] = Pending(signIn: begun)
        return begun
    }
}
