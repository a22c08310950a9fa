import Foundation

/// The person's finger on the key: when a request needs user presence, whether and when they
/// touch it. Scripted by the command line (`--touch`), by each request's turn (``queue(_:)``),
/// and by python-fido2's controller (`/usbN/touch/on|off`: the button held down or let go).
public final class Touch: @unchecked Sendable {
    /// What the person does when the key asks for a touch.
    public enum Policy: Sendable, Equatable {
        /// Touches at once.
        case always
        /// Never touches: the request waits until it is canceled or times out.
        case never
        /// Touches after this many milliseconds.
        case after(milliseconds: Int)
        /// Touches only while the button is held (``press()`` … ``release()``), as python-fido2's
        /// controller drives a key.
        case button
    }

    /// One request's answer, queued ahead of the policy (``queue(_:)``).
    public enum Turn: Sendable, Equatable {
        case touch
        case after(milliseconds: Int)
        /// The request waits out its timeout (or a cancel).
        case ignore
    }

    /// How a wait for a touch ended.
    public enum Outcome: Sendable, Equatable {
        case touched, canceled, timedOut
    }

    private let lock = NSLock()
    private var policy: Policy
    private var held = false
    private var turns = [Turn]()
    /// The waits in progress, woken when the button moves.
    private var waiting = [ObjectIdentifier: CTAPProgress]()

    public init(policy: Policy = .always) {
        self.policy = policy
    }

    public var currentPolicy: Policy {
        get { lock.withLock { policy } }
        set { lock.withLock { policy = newValue } }
    }

    /// The next requests' answers, in order, before the policy answers again.
    public func queue(_ next: [Turn]) { lock.withLock { turns += next } }

    /// The button is held down (the controller's `touch/on`).
    public func press() { move(held: true) }
    /// The button is let go (`touch/off`).
    public func release() { move(held: false) }

    private func move(held: Bool) {
        let wake = lock.withLock { () -> [CTAPProgress] in
            self.held = held
            return Array(waiting.values)
        }
        for progress in wake { progress.wake() }
    }

    /// Waits for one touch for the request `progress` tracks, at most `timeout`: it reports
    /// UPNEEDED meanwhile.
    public func await(_ progress: CTAPProgress, timeout: Duration) -> Outcome {
        let turn: Turn? = lock.withLock { turns.isEmpty ? nil : turns.removeFirst() }
        let started = Date()
        let (seconds, attoseconds) = timeout.components
        let deadline = started.addingTimeInterval(Double(seconds) + Double(attoseconds) / 1e18)
        let rule: (Date) -> Bool
        switch turn {
        case .touch?: return progress.isCanceled ? .canceled : .touched
        case .after(let ms)?: rule = { $0 >= started.addingTimeInterval(Double(ms) / 1000) }
        case .ignore?: rule = { _ in false }
        case nil:
            switch currentPolicy {
            case .always: return progress.isCanceled ? .canceled : .touched
            case .never: rule = { _ in false }
            case .after(let ms): rule = { $0 >= started.addingTimeInterval(Double(ms) / 1000) }
            case .button: rule = { [unowned self] _ in lock.withLock { held } }
            }
        }
        progress.status = .upNeeded
        lock.withLock { waiting[ObjectIdentifier(progress)] = progress }
        defer {
            lock.withLock { _ = waiting.removeValue(forKey: ObjectIdentifier(progress)) }
            progress.status = .processing
        }
        if progress.wait(until: deadline, for: { rule(Date()) }) { return .touched }
        return progress.isCanceled ? .canceled : .timedOut
    }
}
