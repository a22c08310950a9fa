import Foundation

/// The KEEPALIVE status a key reports while it works on a request (CTAP 2.1 §11.2.9.2.1).
public enum KeepaliveStatus: UInt8, Sendable {
    /// Working.
    case processing = 1
    /// Waiting for the person to touch the key.
    case upNeeded = 2
}

/// One request in flight on a channel: what the key reports while it works (the transport sends a
/// KEEPALIVE with ``status`` every 100 ms until the answer is ready), and whether the client sent
/// CTAPHID_CANCEL for it (the key stops waiting for a touch and answers
/// CTAP2_ERR_KEEPALIVE_CANCEL). Shared by the transport's reader and the key's worker.
public final class CTAPProgress: @unchecked Sendable {
    private let condition = NSCondition()
    private var current = KeepaliveStatus.processing
    private var canceled = false

    public init() {}

    /// What a KEEPALIVE reports now.
    public var status: KeepaliveStatus {
        get { condition.lock(); defer { condition.unlock() }; return current }
        set { condition.lock(); current = newValue; condition.unlock() }
    }

    /// Whether the request was canceled (CTAPHID_CANCEL, or its channel was dropped).
    public var isCanceled: Bool { condition.lock(); defer { condition.unlock() }; return canceled }

    /// Cancels the request: a wait for a touch ends at once.
    public func cancel() {
        condition.lock()
        canceled = true
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until `done()` holds (checked whenever ``wake()`` is called, and at least every
    /// 50 ms), the request is canceled, or `deadline` passes: `true` only when `done()` held.
    public func wait(until deadline: Date, for done: () -> Bool) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if canceled { return false }
            if done() { return true }
            if Date() >= deadline { return false }
            _ = condition.wait(until: min(deadline, Date(timeIntervalSinceNow: 0.05)))
        }
    }

    /// Wakes a ``wait(until:for:)`` to look again.
    public func wake() {
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }
}
