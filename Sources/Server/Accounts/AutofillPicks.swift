import Dispatch
import Foundation
import Keychain
import Session

/// The conditional sign-ins pending on an account's devices (one per device, as a page has one
/// autofill request at a time), each ended by the person's pick, its timeout (on the account's
/// clock: a virtual one moves with `POST …/clock`), or the account's end. Neither a pending
/// sign-in nor a pick waiting for one holds a thread: each is a callback kept here, run when it
/// ends.
final class AutofillPicks: @unchecked Sendable {
    enum Outcome: Sendable {
        case picked(AccountChoice)
        case timedOut
        /// The person dismissed the autofill list.
        case dismissed
        /// The account ended, or the server stops: the request is over.
        case canceled
    }

    /// Which passkeys the autofill list of a pending sign-in offers: the RP ID's, and only the
    /// allowed ones when the request names some.
    struct Scope: Sendable {
        let rpId: String
        let allowed: [[UInt8]]
    }

    private struct Pending {
        let serial: UInt64
        let scope: Scope
        /// When it times out on the virtual clock (`nil`: the real clock's deadline only).
        let virtualDeadline: UInt64?
        let finish: @Sendable (Outcome) -> Void
    }

    /// A pick made before its sign-in began (a test starts the sign-in and picks at once).
    private struct WaitingPick {
        let serial: UInt64
        let outcome: Outcome
        let answer: @Sendable (Bool) -> Void
    }

    private let lock = NSLock()
    private var pending = [String: Pending]()
    /// Per device, oldest first.
    private var waiting = [String: [WaitingPick]]()
    private var serial: UInt64 = 0
    private var closed = false

    /// A real-time bound on a sign-in pending on a virtual clock that nobody moves.
    static let virtualClockBound: UInt64 = 3_600_000

    /// A conditional sign-in on `device` begins: `finish` runs (on another thread) with how it
    /// ends, after `timeout` milliseconds at the latest. A pick already waiting ends it at once.
    func begin(device: String, scope: Scope, timeout: UInt64, clock: VirtualClock?, finish: @escaping @Sendable (Outcome) -> Void) throws(Problem) {
        lock.lock()
        guard !closed else {
            lock.unlock()
            throw Problem.notFound("the account ended")
        }
        guard pending[device] == nil else {
            lock.unlock()
            throw Problem(409, "usage", "a conditional sign-in is pending on device \(JSONText.shown(device)) already (a page has one at a time)")
        }
        if var picks = waiting[device], !picks.isEmpty {
            let pick = picks.removeFirst()
            waiting[device] = picks.isEmpty ? nil : picks
            lock.unlock()
            DispatchQueue.global().async {
                finish(pick.outcome)
                pick.answer(true)
            }
            return
        }
        serial += 1
        let mine = serial
        pending[device] = Pending(serial: mine, scope: scope, virtualDeadline: clock.map { $0.now &+ timeout }, finish: finish)
        lock.unlock()
        let realTimeout = clock == nil ? timeout : max(timeout, Self.virtualClockBound)
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(realTimeout))) { [weak self] in
            self?.end(device: device, serial: mine, .timedOut)
        }
    }

    /// Ends the sign-in pending on `device` with `outcome`; when none is, the pick waits up to
    /// `wait` milliseconds for one to begin. `answer` runs (on another thread) with whether a
    /// sign-in took the pick.
    func pick(_ outcome: Outcome, device: String, wait: UInt64, answer: @escaping @Sendable (Bool) -> Void) {
        lock.lock()
        if let ended = pending.removeValue(forKey: device) {
            lock.unlock()
            DispatchQueue.global().async {
                ended.finish(outcome)
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
        waiting[device, default: []].append(WaitingPick(serial: mine, outcome: outcome, answer: answer))
        lock.unlock()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(wait))) { [weak self] in
            self?.giveUp(device: device, serial: mine)
        }
    }

    /// What the sign-in pending on `device` offers (`nil`: none is pending).
    func pendingScope(device: String) -> Scope? {
        lock.lock()
        defer { lock.unlock() }
        return pending[device]?.scope
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
        lock.unlock()
        for (_, ended) in all { ended.finish(.canceled) }
        for pick in picks { pick.answer(false) }
    }

    /// The device is gone: its pending sign-in is canceled, and the picks waiting for one are
    /// answered "none".
    func end(device: String) {
        lock.lock()
        let ended = pending.removeValue(forKey: device), picks = waiting.removeValue(forKey: device) ?? []
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
