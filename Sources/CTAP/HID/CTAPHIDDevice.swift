/// The device side of CTAPHID (CTAP 2.1 §11.2.4–11.2.9) as a value: reports in, reports out,
/// and the whole messages the key must answer. It holds what a USB key's HID layer holds — the
/// channels it allocated, the one transaction in flight device-wide (a message being received,
/// or a request the key works on), a channel's lock — and nothing of threads, sockets or clocks:
/// time is given to it (milliseconds on any monotonic clock), so a test or a fuzzer drives it
/// exactly. ``HIDKey`` runs it for the transports.
///
/// `Endpoint` is whatever the transport needs to send a report back to the client that sent the
/// request (a UDP address, a connection): each answer goes to the endpoint its request came from.
///
///     var device = CTAPHIDDevice<Int>(capabilities: 0x05)
///     let outputs = device.receive(report, from: 1, now: 0)   // .report(bytes, to: 1), .handle(request)…
public struct CTAPHIDDevice<Endpoint> {
    /// A whole message for the key (CTAPHID_CBOR, CTAPHID_MSG, CTAPHID_WINK), numbered so that its
    /// answer can be matched to it (``answered(_:with:)``).
    public struct Request: Sendable {
        public let transaction: UInt64
        public let channel: UInt32
        public let command: CTAPHIDCommand
        public let payload: [UInt8]
    }

    /// What the device does in answer to an input.
    public enum Output {
        /// Sends a report to a client.
        case report([UInt8], to: Endpoint)
        /// Hands a request to the key (one at a time: none is handed while another is in flight).
        case handle(Request)
        /// The request in flight is canceled (CTAPHID_CANCEL on its channel, a resynchronizing
        /// CTAPHID_INIT, the power going): its progress is to stop waiting.
        case cancel(transaction: UInt64)
    }

    /// How long a message waits for its next continuation packet before it is dropped with
    /// ERR_MSG_TIMEOUT (a client that stops mid-message must not hold the key).
    public static var messageTimeout: UInt64 { 750 }
    /// The longest CTAPHID_LOCK, in seconds (§11.2.9.2.2).
    public static var longestLock: UInt8 { 10 }
    /// The most channels kept: past it, allocating one forgets the one least recently used (a
    /// client allocating channels in a loop must not grow the key without bound).
    public static var channelLimit: Int { 1024 }

    /// The INIT response's capability flags, device version, and the longest message accepted.
    public let capabilities: UInt8
    public let deviceVersion: (major: UInt8, minor: UInt8, build: UInt8)
    public let maxMessageSize: Int

    /// The allocated channels, each with when it was last used (a count of packets accepted).
    private var channels = [UInt32: UInt64]()
    private var uses: UInt64 = 0
    private var assembly: Assembly?
    private var processing: Processing?
    private var lock: (channel: UInt32, until: UInt64)?
    private var nextTransaction: UInt64 = 1
    /// The time of the latest input.
    private var now: UInt64 = 0
    private var randomChannel: () -> UInt32

    /// A message arriving packet by packet.
    private struct Assembly {
        let channel: UInt32
        let command: CTAPHIDCommand
        let length: Int
        var data: [UInt8]
        var sequence: UInt8
        var deadline: UInt64
        let endpoint: Endpoint
    }

    /// The request the key works on.
    private struct Processing {
        let transaction: UInt64
        let channel: UInt32
        let command: CTAPHIDCommand
        let endpoint: Endpoint
    }

    /// `random` draws channel identifiers (redrawn until nonzero, not broadcast, and unused).
    public init(capabilities: UInt8, deviceVersion: (major: UInt8, minor: UInt8, build: UInt8) = (1, 0, 0), maxMessageSize: Int = 1200,
                random: @escaping () -> UInt32 = { UInt32.random(in: .min ... .max) }) {
        self.capabilities = capabilities
        self.deviceVersion = deviceVersion
        self.maxMessageSize = min(maxMessageSize, CTAPHIDPacket.longestMessage)
        self.randomChannel = random
    }

    /// Whether a transaction runs (a message being received or a request being answered).
    public var isBusy: Bool { assembly != nil || processing != nil }

    /// The transaction the key works on, if any.
    public var transactionInFlight: UInt64? { processing?.transaction }

    /// The channels allocated now.
    public var allocatedChannels: Set<UInt32> { Set(channels.keys) }

    /// When ``expire(now:)`` next has something to do (a message's timeout, a lock's end).
    public var nextDeadline: UInt64? {
        [assembly?.deadline, lock?.until].compactMap { $0 }.min()
    }

    /// A report from a client at `endpoint`. A report that is not 64 bytes is ignored.
    public mutating func receive(_ report: [UInt8], from endpoint: Endpoint, now: UInt64) -> [Output] {
        var outputs = expire(now: now)
        guard let packet = CTAPHIDPacket(report) else { return outputs }
        switch packet {
        case .continuation(let channel, let sequence, let data):
            outputs += continuation(channel, sequence, data, endpoint)
        case .initialization(let channel, let command, let length, let data):
            outputs += initialization(channel, command, length, data, endpoint)
        }
        return outputs
    }

    /// The key's answer to `transaction`: its reports, to the endpoint the request came from
    /// (nothing when the transaction was aborted meanwhile). The device is idle after it.
    public mutating func answered(_ transaction: UInt64, with payload: [UInt8]) -> [Output] {
        guard let request = processing, request.transaction == transaction else { return [] }
        processing = nil
        guard payload.count <= CTAPHIDPacket.longestMessage else { return [error(.other, request.channel, request.endpoint)] }
        return CTAPHIDPacket.reports(channel: request.channel, command: request.command.rawValue, payload: payload)
            .map { .report($0, to: request.endpoint) }
    }

    /// A CTAPHID_KEEPALIVE with `status` for the request the key works on (none when idle).
    public func keepalive(_ status: KeepaliveStatus) -> [Output] {
        guard let request = processing else { return [] }
        return CTAPHIDPacket.reports(channel: request.channel, command: CTAPHIDCommand.keepalive.rawValue, payload: [status.rawValue])
            .map { .report($0, to: request.endpoint) }
    }

    /// What time does: a message whose next packet is overdue is dropped, its client told
    /// ERR_MSG_TIMEOUT; a lock past its time ends.
    public mutating func expire(now: UInt64) -> [Output] {
        self.now = max(self.now, now)
        var outputs = [Output]()
        if let message = assembly, self.now >= message.deadline {
            assembly = nil
            outputs.append(error(.messageTimeout, message.channel, message.endpoint))
        }
        if let held = lock, self.now >= held.until { lock = nil }
        return outputs
    }

    /// A client is gone (its connection closed): the message it was sending is dropped and its
    /// request in flight canceled at once, so the key need not wait out the message's timeout or
    /// the person's touch for nobody. `isGone` tells its endpoint.
    public mutating func disconnected(_ isGone: (Endpoint) -> Bool) -> [Output] {
        if let message = assembly, isGone(message.endpoint) { assembly = nil }
        guard let request = processing, isGone(request.endpoint) else { return [] }
        return [.cancel(transaction: request.transaction)]
    }

    /// The power goes: every channel, the message being received, the lock are forgotten, and the
    /// request in flight is canceled (its answer, if it comes, goes nowhere).
    public mutating func powerOff() -> [Output] {
        let canceled = processing.map { [Output.cancel(transaction: $0.transaction)] } ?? []
        channels = [:]
        assembly = nil
        processing = nil
        lock = nil
        return canceled
    }

    // MARK: - Packets

    private mutating func continuation(_ channel: UInt32, _ sequence: UInt8, _ data: ArraySlice<UInt8>, _ endpoint: Endpoint) -> [Output] {
        // A continuation packet with no message of its channel being received is spurious:
        // ignored (§11.2.6.4), as is one from another channel while a message arrives.
        guard var message = assembly, message.channel == channel else { return [] }
        guard sequence == message.sequence else {
            assembly = nil
            return [error(.invalidSequence, channel, endpoint)]
        }
        message.data += data.prefix(message.length - message.data.count)
        message.sequence += 1
        message.deadline = later(by: Self.messageTimeout)
        use(channel)
        guard message.data.count == message.length else {
            assembly = message
            return []
        }
        assembly = nil
        return complete(channel, message.command, message.data, endpoint)
    }

    private mutating func initialization(_ channel: UInt32, _ byte: UInt8, _ length: Int, _ data: ArraySlice<UInt8>,
                                         _ endpoint: Endpoint) -> [Output] {
        let command = CTAPHIDCommand(rawValue: byte)
        if command == .cancel { return cancel(channel) }
        // A channel is the broadcast one (for CTAPHID_INIT alone) or one this device allocated.
        let broadcast = channel == CTAPHIDPacket.broadcastChannel
        guard broadcast ? command == .initialize : channels[channel] != nil else { return [error(.invalidChannel, channel, endpoint)] }
        // One transaction at a time, device-wide; a lock keeps out every other channel.
        if let held = lock, held.channel != channel { return [error(.channelBusy, channel, endpoint)] }
        if let message = assembly, message.channel != channel { return [error(.channelBusy, channel, endpoint)] }
        if let request = processing, request.channel != channel { return [error(.channelBusy, channel, endpoint)] }
        if command == .initialize { return initialize(channel, length, data, endpoint) }
        // Its own channel: a new message while one arrives breaks the sequence; while the key
        // works on one, the device is busy.
        if assembly != nil {
            assembly = nil
            return [error(.invalidSequence, channel, endpoint)]
        }
        if processing != nil { return [error(.channelBusy, channel, endpoint)] }
        guard let command, [.ping, .msg, .cbor, .wink, .lock].contains(command) else { return [error(.invalidCommand, channel, endpoint)] }
        guard length <= maxMessageSize else { return [error(.invalidLength, channel, endpoint)] }
        use(channel)
        guard length <= data.count else {
            assembly = Assembly(channel: channel, command: command, length: length, data: Array(data), sequence: 0,
                                deadline: later(by: Self.messageTimeout), endpoint: endpoint)
            return []
        }
        return complete(channel, command, Array(data.prefix(length)), endpoint)
    }

    /// CTAPHID_CANCEL: the channel's request in flight is canceled (its answer, which the key
    /// gives as CTAP2_ERR_KEEPALIVE_CANCEL, ends the transaction), a message of its still arriving
    /// is dropped; nothing answers the cancel itself (§11.2.9.1.5).
    private mutating func cancel(_ channel: UInt32) -> [Output] {
        if let message = assembly, message.channel == channel { assembly = nil }
        guard let request = processing, request.channel == channel else { return [] }
        return [.cancel(transaction: request.transaction)]
    }

    /// CTAPHID_INIT (§11.2.9.1.3): on the broadcast channel a new channel; on an allocated one, that
    /// channel resynchronized — its transaction aborted. The answer echoes the nonce on the
    /// channel the request came on.
    private mutating func initialize(_ channel: UInt32, _ length: Int, _ data: ArraySlice<UInt8>, _ endpoint: Endpoint) -> [Output] {
        guard length == 8 else { return [error(.invalidLength, channel, endpoint)] }
        var outputs = [Output]()
        if let message = assembly, message.channel == channel { assembly = nil }
        if let request = processing, request.channel == channel {
            processing = nil
            outputs.append(.cancel(transaction: request.transaction))
        }
        let given = channel == CTAPHIDPacket.broadcastChannel ? allocate() : channel
        use(given)
        let id: [UInt8] = [UInt8(given >> 24), UInt8(given >> 16 & 0xFF), UInt8(given >> 8 & 0xFF), UInt8(given & 0xFF)]
        let payload = Array(data.prefix(8)) + id + [2, deviceVersion.major, deviceVersion.minor, deviceVersion.build, capabilities]
        return outputs + CTAPHIDPacket.reports(channel: channel, command: CTAPHIDCommand.initialize.rawValue, payload: payload)
            .map { .report($0, to: endpoint) }
    }

    /// A whole message of `command` on `channel`.
    private mutating func complete(_ channel: UInt32, _ command: CTAPHIDCommand, _ payload: [UInt8], _ endpoint: Endpoint) -> [Output] {
        switch command {
        case .ping:
            return CTAPHIDPacket.reports(channel: channel, command: command.rawValue, payload: payload).map { .report($0, to: endpoint) }
        case .lock:
            guard payload.count == 1 else { return [error(.invalidLength, channel, endpoint)] }
            guard payload[0] <= Self.longestLock else { return [error(.invalidParameter, channel, endpoint)] }
            lock = payload[0] == 0 ? nil : (channel, later(by: UInt64(payload[0]) * 1000))
            return CTAPHIDPacket.reports(channel: channel, command: command.rawValue, payload: []).map { .report($0, to: endpoint) }
        case .cbor, .msg, .wink:
            // What the key says it cannot do is an unknown command (INIT's capabilities: WINK
            // 0x01, CBOR 0x04, NMSG 0x08 — MSG is there unless NMSG says it is not).
            let offered = switch command {
            case .cbor: capabilities & 0x04 != 0
            case .msg: capabilities & 0x08 == 0
            default: capabilities & 0x01 != 0
            }
            guard offered else { return [error(.invalidCommand, channel, endpoint)] }
            // A CBOR message starts with its command byte, an APDU with CLA INS P1 P2; a wink
            // carries nothing.
            let shortest = switch command {
            case .cbor: 1
            case .msg: 4
            default: 0
            }
            guard payload.count >= shortest, command != .wink || payload.isEmpty else { return [error(.invalidLength, channel, endpoint)] }
            let transaction = nextTransaction
            nextTransaction += 1
            processing = Processing(transaction: transaction, channel: channel, command: command, endpoint: endpoint)
            return [.handle(Request(transaction: transaction, channel: channel, command: command, payload: payload))]
        default:
            return [error(.invalidCommand, channel, endpoint)]
        }
    }

    // MARK: - Channels

    /// A fresh channel: random, nonzero, not broadcast, not in use; the least recently used one
    /// forgotten when there are ``channelLimit`` already.
    private mutating func allocate() -> UInt32 {
        if channels.count >= Self.channelLimit {
            let busy = [assembly?.channel, processing?.channel, lock?.channel]
            if let oldest = channels.filter({ !busy.contains($0.key) }).min(by: { $0.value < $1.value })?.key { channels[oldest] = nil }
        }
        while true {
            let channel = randomChannel()
            if channel != 0, channel != CTAPHIDPacket.broadcastChannel, channels[channel] == nil { return channel }
        }
    }

    private mutating func use(_ channel: UInt32) {
        uses += 1
        channels[channel] = uses
    }

    /// `milliseconds` after the latest input (the end of time at most).
    private func later(by milliseconds: UInt64) -> UInt64 { now > .max - milliseconds ? .max : now + milliseconds }

    private func error(_ code: CTAPHIDError, _ channel: UInt32, _ endpoint: Endpoint) -> Output {
        .report(CTAPHIDPacket.reports(channel: channel, command: CTAPHIDCommand.error.rawValue, payload: [code.rawValue])[0], to: endpoint)
    }
}
