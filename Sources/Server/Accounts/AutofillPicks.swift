import Dispatch
import Foundation
import Session

/// The conditional sign-ins pending on an account's devices, one per device: the autofill list of
/// the page the person sees. Each belongs to the page that made it (its ``Owner``) and ends by the
/// person's pick, its timeout (on the account's clock: a virtual one moves with `POST …/clock`),
/// its page withdrawing it (aborted, or the page went away), another page's request taking the
/// list, or the account's end. Neither a pending sign-in nor a pick waiting for one holds a
/// thread: each is a callback kept here, run when it ends.
final class AutofillPicks: @unchecked Sendable {
    enum Outcome: Sendable {
        case picked(AccountChoice)
        case timedOut
        /// The person dismissed the autofill list.
        case dismissed
        /// The account ended, or the server stops: the request is over.
        case canceled
        /// Another page's conditional sign-in took the device's autofill list (the newest page is
        /// the one the person sees).
        case superseded(by: Owner)
        /// Its page withdrew it: the page aborted it, or went away (a navigation, a reload).
        case withdrawn
    }

    /// Whose request a pending sign-in is: the caller's origin and, when the page bridge sends
    /// them, the request's id, the page (one document: a reload is a new page) and its URL. A
    /// request without a page is a client's own (`curl`, a test's HTTP call).
    struct Owner: Sendable, Encodable, Equatable {
        var id: String?
        var page: String?
        var url: String?
        var origin: String
    }

    private struct Pending {
        let serial: UInt64
        /// The request, as the session holds it: what its list offers, a pick signed, its deadline.
        let signIn: ConditionalSignIn
        let owner: Owner
        /// When it times out on the virtual clock (`nil`: the real clock's deadline only).
        let virtualDeadline: UInt64?
        let finish: @Sendable (Outcome) -> Void
    }

    /// A pick made before its sign-in began (a test starts the sign-in and picks at once).
    private struct WaitingPick {
        let serial: UInt64
        /// The request it is for (`nil`: whichever begins).
        let request: String?
        let outcome: Outcome
        let answer: @Sendable (Bool) -> Void
    }

    private let lock = NSLock()
    private var pending = [String: Pending]()
    /// Per device, oldest first.
    private var waiting = [String: [WaitingPick]]()
    /// Per device, requests their pages withdrew before they began (a page that aborts, or goes
    /// away, while its request is on its way): one of them that begins after all ends at once.
    /// The last ``withdrawnKept`` only.
    private var withdrawnEarly = [String: [String]]()
    private var serial: UInt64 = 0
    private var closed = false

    static let withdrawnKept = 16

    /// A real-time bound on a sign-in pending on a virtual clock that nobody moves.
    static let virtualClockBound: UInt64 = 3_600_000

    /// Whether `owner`'s conditional sign-in may begin on `device`: `false` when its page withdrew
    /// it already (it is over before it began). One pending from the same page — or from a client
    /// that names no page — is a `409`, as Chromium refuses a page's second request
    /// (OperationError, "A request is already pending."; measured in Chromium 156: a modal `get()`
    /// or a `create()` while one is pending is refused so too, and the pending one stays). Asked
    /// under the account's lock, with the ``begin(_:device:owner:clock:finish:)`` that follows.
    func admit(device: String, owner: Owner) throws(Problem) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { throw Problem.notFound("the account ended") }
        if let id = owner.id, let early = withdrawnEarly[device], let index = early.firstIndex(of: id) {
            withdrawnEarly[device]?.remove(at: index)
            return false
        }
        if let current = pending[device] {
            guard let page = owner.page, let theirs = current.owner.page, page != theirs else {
                throw Problem(409, .usage, "A request is already pending: a conditional sign-in is pending on device \(JSONText.shown(device)) already (a page has one at a time)",
                              domException: "OperationError")
            }
        }
        return true
    }

    /// `signIn`, admitted, begins on `device` for `owner`: `finish` runs (on another thread) with
    /// how it ends, by its deadline on the account's clock at the latest. A pick already waiting
    /// for it ends it at once. One pending from another page ends, superseded: the newest page's
    /// request has the list.
    func begin(_ signIn: ConditionalSignIn, device: String, owner: Owner, clock: VirtualClock?,
               finish: @escaping @Sendable (Outcome) -> Void) {
        lock.lock()
        guard !closed else {
            lock.unlock()
            DispatchQueue.global().async { finish(.canceled) }
            return
        }
        // Its page withdrew it since it was admitted (the withdrawal takes no account lock).
        if let id = owner.id, let early = withdrawnEarly[device], let index = early.firstIndex(of: id) {
            withdrawnEarly[device]?.remove(at: index)
            lock.unlock()
            DispatchQueue.global().async { finish(.withdrawn) }
            return
        }
        let superseded = pending.removeValue(forKey: device)
        if var picks = waiting[device], let index = picks.firstIndex(where: { $0.request == nil || $0.request == owner.id }) {
            let pick = picks.remove(at: index)
            waiting[device] = picks.isEmpty ? nil : picks
            lock.unlock()
            DispatchQueue.global().async {
                superseded?.finish(.superseded(by: owner))
                finish(pick.outcome)
                pick.answer(true)
            }
            return
        }
        serial += 1
        let mine = serial
        pending[device] = Pending(serial: mine, signIn: signIn, owner: owner, virtualDeadline: clock.map { _ in signIn.deadline }, finish: finish)
        lock.unlock()
        if let superseded { DispatchQueue.global().async { superseded.finish(.superseded(by: owner)) } }
        let realTimeout = clock == nil ? signIn.timeout : max(signIn.timeout, Self.virtualClockBound)
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(realTimeout))) { [weak self] in
            self?.end(device: device, serial: mine, .timedOut)
        }
    }

    /// Ends the sign-in pending on `device` with `outcome` — only when it is `request`'s, if the
    /// pick names one; otherwise the pick waits up to `wait` milliseconds for its sign-in to begin.
    /// `answer` runs (on another thread) with whether a sign-in took the pick.
    func pick(_ outcome: Outcome, device: String, request: String?, wait: UInt64, answer: @escaping @Sendable (Bool) -> Void) {
        lock.lock()
        if let current = pending[device], request == nil || current.owner.id == request {
            pending[device] = nil
            lock.unlock()
            DispatchQueue.global().async {
                current.finish(outcome)
                answer(true)
            }
            return
        }
        guard !closed, wait > 0 else {
            lock.unlock()
            return DispatchQueue.global().async { answer(false) }
        }
        serial += 1
        let mine = serial
        waiting[device, default: []].append(WaitingPick(serial: mine, request: request, outcome: outcome, answer: answer))
        lock.unlock()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(wait))) { [weak self] in
            self?.giveUp(device: device, serial: mine)
        }
    }

    /// The page withdraws its request `request` (it aborted it, or went away): ended when it is
    /// the one pending on `device`, else kept in mind in case it begins yet. Whether it was pending.
    func withdraw(device: String, request: String) -> Bool {
        lock.lock()
        guard let current = pending[device], current.owner.id == request else {
            var early = withdrawnEarly[device, default: []]
            if !early.contains(request) { early.append(request) }
            withdrawnEarly[device] = Array(early.suffix(Self.withdrawnKept))
            lock.unlock()
            return false
        }
        pending[device] = nil
        lock.unlock()
        DispatchQueue.global().async { current.finish(.withdrawn) }
        return true
    }

    /// The sign-in pending on `device`, and whose it is (`nil`: none is pending).
    func pending(device: String) -> (owner: Owner, signIn: ConditionalSignIn)? {
        lock.lock()
        defer { lock.unlock() }
        return pending[device].map { ($0.owner, $0.signIn) }
    }

    /// The virtual clock reads `now`: the sign-ins whose timeout has passed end.
    func clockMoved(to now: UInt64) {
        lock.lock()
        let due = pending.filter { $0.value.virtualDeadline.map { $0 <= now } ?? false }
        for device in due.keys { pending[device] = nil }
        lock.unlock()
        for (_, ended) in due { DispatchQueue.global().async { ended.finish(.timedOut) } }
    }

    /// Cancels every pending sign-in and answers every waiting pick "none" (the account ends, or
    /// the server stops).
    func close() {
        lock.lock()
        closed = true
        let all = pending, picks = waiting.values.joined()
        pending = [:]
        waiting = [:]
        withdrawnEarly = [:]
        lock.unlock()
        for (_, ended) in all { ended.finish(.canceled) }
        for pick in picks { pick.answer(false) }
    }

    /// The device is gone: its pending sign-in is canceled, and the picks waiting for one are
    /// answered "none".
    func end(device: String) {
        lock.lock()
        let ended = pending.removeValue(forKey: device), picks = waiting.removeValue(forKey: device) ?? []
        withdrawnEarly[device] = nil
        lock.unlock()
        ended?.finish(.canceled)
        for pick in picks { pick.answer(false) }
    }

    private func end(device: String, serial: UInt64, _ outcome: Outcome) {
        lock.lock()
        guard let ended = pending[device], ended.serial == serial else { return lock.unlock() }
        pending[device] = nil
        lock.unlock()
        ended.finish(outcome)
    }

    private func giveUp(device: String, serial: UInt64) {
        lock.lock()
        guard let picks = waiting[device], let index = picks.firstIndex(where: { $0.serial == serial }) else { return lock.unlock() }
        let pick = picks[index]
        waiting[device] = picks.count == 1 ? nil : picks.enumerated().filter { $0.offset != index }.map(\.element)
        lock.unlock()
        pick.answer(false)
    }
}
