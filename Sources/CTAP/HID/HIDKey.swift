import Foundation

/// Where a report goes back to: one client of the key (an address that sent UDP datagrams, a
/// connection to the Unix socket).
public protocol HIDEndpoint: AnyObject, Sendable {
    /// Sends one 64-byte report without ever blocking: a client that does not read its reports
    /// loses them, and never holds the key.
    func send(_ report: [UInt8])
}

/// A security key on the wire: its ``CTAPHIDDevice`` state, shared by every transport of the key
/// (channels belong to the device, not to a connection), run for real — the key answers each
/// request on a worker of its own, one at a time, while the transports keep reading (a
/// CTAPHID_CANCEL must get through while the key waits for a touch); CTAPHID_KEEPALIVE goes out
/// every 100 ms meanwhile, and at once when the status changes; a message whose packets stop
/// coming is dropped after 750 ms; and the power can be cut and restored.
///
///     let key = HIDKey(handler: SecurityKey(session: session))
///     key.receive(report, from: client)   // from any transport's thread
///     key.stop()                          // its ticker thread holds it until then
public final class HIDKey: @unchecked Sendable {
    public let handler: any CTAPHIDHandler

    /// How often a request the key works on is reported alive (§11.2.9.1.7: at least every 100 ms).
    public static let keepaliveInterval: UInt64 = 100
    /// How soon a change of the key's status is reported.
    static let statusPoll: UInt64 = 20

    /// Guards everything below; the ticker waits on it for its next deadline.
    private let state = NSCondition()
    private var device: CTAPHIDDevice<any HIDEndpoint>
    private var powered = true
    private var stopped = false
    /// The requests handed to the key and not yet answered: the one in flight, and an aborted one
    /// the key may still be finishing.
    private var requests = [UInt64: Flight]()
    /// Reports leave in the order the device made them: taken before the state is let go.
    private let output = NSLock()
    /// The key answers one message at a time, in order, off the transports' threads.
    private let worker = DispatchQueue(label: "authctl.ctap.key")
    private let clock = ContinuousClock()
    private let started: ContinuousClock.Instant
    private let tickerDone = DispatchSemaphore(value: 0)

    private struct Flight {
        let progress: CTAPProgress
        var lastKeepalive: UInt64
        var lastStatus: KeepaliveStatus
    }

    public init(handler: any CTAPHIDHandler) {
        self.handler = handler
        device = CTAPHIDDevice(capabilities: handler.capabilities, deviceVersion: handler.deviceVersion,
                               maxMessageSize: handler.maxMessageSize)
        started = clock.now
        let ticker = Thread { [weak self] in
            self?.tick()
        }
        ticker.name = "authctl.ctap.ticker"
        ticker.start()
    }

    /// Whether the key has power.
    public var isPoweredOn: Bool { state.withLock { powered && !stopped } }

    /// A report a client sent; ignored while the key has no power.
    public func receive(_ report: [UInt8], from endpoint: any HIDEndpoint) {
        state.lock()
        guard powered, !stopped else { return state.unlock() }
        let outputs = device.receive(report, from: endpoint, now: milliseconds())
        perform(outputs)
    }

    /// A client's connection closed: its half-sent message dropped, its request in flight canceled.
    public func disconnected(_ endpoint: any HIDEndpoint) {
        state.lock()
        guard powered, !stopped else { return state.unlock() }
        perform(device.disconnected { $0 === endpoint })
    }

    /// The power is cut: every channel and the lock are forgotten, a message being received is
    /// dropped, and the request in flight is canceled (the key stops waiting; its answer goes
    /// nowhere). Nothing is answered until ``powerOn()``.
    public func powerOff() {
        state.lock()
        defer { state.unlock() }
        guard powered else { return }
        powered = false
        for case .cancel(let transaction) in device.powerOff() { requests[transaction]?.progress.cancel() }
        state.broadcast()
    }

    /// The power comes back: the key is told (``CTAPHIDHandler/powerCycled()``, after whatever it
    /// was still finishing) before it is handed any new request.
    public func powerOn() {
        state.lock()
        defer { state.unlock() }
        guard !powered, !stopped else { return }
        worker.async { [handler] in handler.powerCycled() }
        powered = true
    }

    /// Ends the key for good: the power cut, and the key's worker given up to `wait` to finish
    /// what it was answering.
    public func stop(wait: Duration = .seconds(5)) {
        powerOff()
        state.withLock {
            stopped = true
            state.broadcast()
        }
        let (seconds, attoseconds) = wait.components
        let deadline = DispatchTime.now() + Double(seconds) + Double(attoseconds) / 1e18
        _ = tickerDone.wait(timeout: deadline)
        let finished = DispatchSemaphore(value: 0)
        worker.async { finished.signal() }
        _ = finished.wait(timeout: deadline)
    }

    // MARK: - The device's outputs

    /// Carries out `outputs` (called with the state locked; unlocks it): requests handed to the
    /// worker, cancels passed to their progress, reports sent in order.
    private func perform(_ outputs: [CTAPHIDDevice<any HIDEndpoint>.Output]) {
        var reports = [([UInt8], any HIDEndpoint)]()
        for output in outputs {
            switch output {
            case .report(let report, let endpoint): reports.append((report, endpoint))
            case .cancel(let transaction): requests[transaction]?.progress.cancel()
            case .handle(let request):
                let now = milliseconds()
                requests[request.transaction] = Flight(progress: CTAPProgress(), lastKeepalive: now, lastStatus: .processing)
                worker.async { [weak self] in self?.answer(request) }
            }
        }
        state.broadcast()  // the ticker's deadlines may have moved
        output.lock()
        state.unlock()
        for (report, endpoint) in reports { endpoint.send(report) }
        output.unlock()
    }

    /// On the worker: the key answers `request`, unless it was aborted before its turn came.
    private func answer(_ request: CTAPHIDDevice<any HIDEndpoint>.Request) {
        let progress: CTAPProgress? = state.withLock {
            guard device.transactionInFlight == request.transaction, powered, !stopped else {
                requests[request.transaction] = nil
                return nil
            }
            return requests[request.transaction]?.progress
        }
        guard let progress else { return }
        let answer: [UInt8]
        switch request.command {
        case .cbor: answer = handler.cbor(request.payload, progress: progress)
        case .msg: answer = handler.msg(request.payload, progress: progress)
        default:
            handler.wink()
            answer = []
        }
        state.lock()
        requests[request.transaction] = nil
        perform(device.answered(request.transaction, with: answer))
    }

    // MARK: - Time

    /// The ticker: messages timed out, locks ended, keepalives sent; asleep until the next of them.
    private func tick() {
        state.lock()
        while !stopped {
            let now = milliseconds()
            var outputs = powered ? device.expire(now: now) : []
            var wake = device.nextDeadline ?? .max
            if powered, let transaction = device.transactionInFlight, var flight = requests[transaction] {
                let status = flight.progress.status
                if status != flight.lastStatus || now - flight.lastKeepalive >= Self.keepaliveInterval {
                    outputs += device.keepalive(status)
                    flight.lastKeepalive = now
                    flight.lastStatus = status
                    requests[transaction] = flight
                }
                wake = min(wake, now + Self.statusPoll)
            }
            if !outputs.isEmpty {
                perform(outputs)
                state.lock()
                continue
            }
            if wake == .max {
                state.wait()
            } else {
                _ = state.wait(until: Date(timeIntervalSinceNow: Double(wake - min(wake, now)) / 1000))
            }
        }
        state.unlock()
        tickerDone.signal()
    }

    /// Milliseconds since the key was made, on a monotonic clock.
    private func milliseconds() -> UInt64 {
        let (seconds, attoseconds) = (clock.now - started).components
        return UInt64(seconds) * 1000 + UInt64(attoseconds / 1_000_000_000_000_000)
    }
}
