import CTAP
import Testing

/// The CTAPHID framing as a value (CTAP 2.1 §11.2.4–11.2.9): reports in, reports out. The
/// reports are written here byte by byte, as a client writes them, not with the device's own
/// fragmenter.
@Suite struct CTAPHIDFramingTests {
    typealias Device = CTAPHIDDevice<Int>

    /// A device whose channels are drawn from a list (then counted up).
    static func device(capabilities: UInt8 = 0x05, channels: [UInt32] = [0x1234_5678, 0x0A0B_0C0D, 0x7777_0001]) -> Device {
        var drawn = channels
        var next: UInt32 = 0x100
        return Device(capabilities: capabilities, deviceVersion: (1, 2, 3), maxMessageSize: 1200, random: {
            if !drawn.isEmpty { return drawn.removeFirst() }
            next += 1
            return next
        })
    }

    static func id(_ channel: UInt32) -> [UInt8] { [UInt8(channel >> 24), UInt8(channel >> 16 & 0xFF), UInt8(channel >> 8 & 0xFF), UInt8(channel & 0xFF)] }

    static func padded(_ bytes: [UInt8]) -> [UInt8] { bytes + [UInt8](repeating: 0, count: 64 - bytes.count) }

    /// An initialization packet: CID, CMD | 0x80, BCNT, the first data.
    static func initialization(_ channel: UInt32, _ command: UInt8, length: Int, _ data: [UInt8] = []) -> [UInt8] {
        padded(id(channel) + [0x80 | command, UInt8(length >> 8), UInt8(length & 0xFF)] + data.prefix(57))
    }

    static func continuation(_ channel: UInt32, _ sequence: UInt8, _ data: [UInt8] = []) -> [UInt8] {
        padded(id(channel) + [sequence] + data.prefix(59))
    }

    /// Every report of a message, as a client splits it.
    static func message(_ channel: UInt32, _ command: UInt8, _ payload: [UInt8]) -> [[UInt8]] {
        var reports = [initialization(channel, command, length: payload.count, Array(payload.prefix(57)))]
        var rest = Array(payload.dropFirst(57)), sequence: UInt8 = 0
        while !rest.isEmpty {
            reports.append(continuation(channel, sequence, Array(rest.prefix(59))))
            rest = Array(rest.dropFirst(59))
            sequence += 1
        }
        return reports
    }

    /// One whole message out of reports a device sent, as a client reassembles it.
    struct Received: Equatable {
        let channel: UInt32
        let command: UInt8
        let payload: [UInt8]
    }

    static func reassemble(_ reports: [[UInt8]]) throws -> [Received] {
        var messages = [Received](), index = 0
        while index < reports.count {
            let first = reports[index]
            try #require(first.count == 64 && first[4] & 0x80 != 0)
            let channel = UInt32(first[0]) << 24 | UInt32(first[1]) << 16 | UInt32(first[2]) << 8 | UInt32(first[3])
            let length = Int(first[5]) << 8 | Int(first[6])
            var payload = Array(first[7...].prefix(length))
            index += 1
            var sequence: UInt8 = 0
            while payload.count < length {
                let next = try #require(index < reports.count ? reports[index] : nil)
                try #require(Array(next[0..<4]) == id(channel) && next[4] == sequence)
                payload += next[5...].prefix(length - payload.count)
                index += 1
                sequence += 1
            }
            messages.append(Received(channel: channel, command: first[4] & 0x7F, payload: payload))
        }
        return messages
    }

    /// The reports among `outputs` sent to `endpoint`, as messages.
    static func sent(_ outputs: [Device.Output], to endpoint: Int = 1) throws -> [Received] {
        try reassemble(outputs.compactMap { if case .report(let bytes, let to) = $0, to == endpoint { bytes } else { nil } })
    }

    static func requests(_ outputs: [Device.Output]) -> [Device.Request] {
        outputs.compactMap { if case .handle(let request) = $0 { request } else { nil } }
    }

    static func error(_ channel: UInt32, _ code: CTAPHIDError) -> Received {
        Received(channel: channel, command: 0x3F, payload: [code.rawValue])
    }

    /// A channel allocated by CTAPHID_INIT on the broadcast channel, from `endpoint`.
    static func allocate(_ device: inout Device, from endpoint: Int = 1, now: UInt64 = 0) throws -> UInt32 {
        let nonce: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]
        let answer = try #require(try sent(device.receive(initialization(0xFFFF_FFFF, 0x06, length: 8, nonce), from: endpoint, now: now), to: endpoint).first)
        let channel = answer.payload[8..<12].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return channel
    }

    static func send(_ device: inout Device, _ reports: [[UInt8]], from endpoint: Int = 1, now: UInt64 = 0) -> [Device.Output] {
        reports.flatMap { device.receive($0, from: endpoint, now: now) }
    }

    @Test func initOnTheBroadcastChannelAllocatesAChannelAndEchoesTheNonce() throws {
        var device = Self.device()
        let nonce: [UInt8] = [0xA1, 0xB2, 0xC3, 0xD4, 0xE5, 0xF6, 0x07, 0x18]
        let answers = try Self.sent(device.receive(Self.initialization(0xFFFF_FFFF, 0x06, length: 8, nonce), from: 1, now: 0))
        // §11.2.9.1.3: on the broadcast channel, 17 bytes: nonce, new CID, protocol 2, version, capabilities.
        #expect(answers == [Self.Received(channel: 0xFFFF_FFFF, command: 0x06, payload: nonce + [0x12, 0x34, 0x56, 0x78, 2, 1, 2, 3, 0x05])])
        #expect(device.allocatedChannels == [0x1234_5678])
        // INIT on an allocated channel resynchronizes it: the same channel, on that channel.
        let again = try Self.sent(device.receive(Self.initialization(0x1234_5678, 0x06, length: 8, nonce), from: 1, now: 1))
        #expect(again == [Self.Received(channel: 0x1234_5678, command: 0x06, payload: nonce + [0x12, 0x34, 0x56, 0x78, 2, 1, 2, 3, 0x05])])
        #expect(device.allocatedChannels == [0x1234_5678])
    }

    @Test func aChannelIsNeverZeroNorBroadcastNorOneInUse() throws {
        var device = Self.device(channels: [0, 0xFFFF_FFFF, 0x42, 0x42, 0x43])
        #expect(try Self.allocate(&device) == 0x42)
        #expect(try Self.allocate(&device) == 0x43)
    }

    @Test func channelZeroAnUnallocatedChannelAndBroadcastOtherThanInitAreInvalid() throws {
        var device = Self.device()
        #expect(try Self.sent(device.receive(Self.initialization(0, 0x01, length: 1, [9]), from: 1, now: 0)) == [Self.error(0, .invalidChannel)])
        #expect(try Self.sent(device.receive(Self.initialization(0x55, 0x10, length: 1, [4]), from: 1, now: 0)) == [Self.error(0x55, .invalidChannel)])
        #expect(try Self.sent(device.receive(Self.initialization(0xFFFF_FFFF, 0x01, length: 1, [9]), from: 1, now: 0))
            == [Self.error(0xFFFF_FFFF, .invalidChannel)])
        #expect(!device.isBusy)
    }

    @Test func aPingIsEchoedAndItsAnswerGoesToItsSender() throws {
        var device = Self.device()
        let channel = try Self.allocate(&device, from: 7)
        let payload = (0..<1000).map { UInt8($0 % 251) }
        let outputs = Self.send(&device, Self.message(channel, 0x01, payload), from: 7)
        #expect(try Self.sent(outputs, to: 7) == [Self.Received(channel: channel, command: 0x01, payload: payload)])
        #expect(try Self.sent(outputs, to: 1).isEmpty)
        #expect(try Self.sent(Self.send(&device, Self.message(channel, 0x01, [])), to: 1) == [Self.Received(channel: channel, command: 0x01, payload: [])])
    }

    @Test func aCBORMessageOf1200BytesArrivesInTwentyOneReportsAndItsAnswerIsFragmentedAlike() throws {
        var device = Self.device()
        let channel = try Self.allocate(&device)
        let payload = [UInt8(0x01)] + (1..<1200).map { UInt8($0 % 256) }
        let reports = Self.message(channel, 0x10, payload)
        #expect(reports.count == 21)  // 57 + 20 × 59 ≥ 1200
        for report in reports.dropLast() { #expect(device.receive(report, from: 1, now: 0).isEmpty) }
        let outputs = device.receive(reports.last!, from: 1, now: 0)
        let request = try #require(Self.requests(outputs).first)
        #expect(request.channel == channel && request.command == .cbor && request.payload == payload)
        #expect(device.transactionInFlight == request.transaction)
        let answer = [UInt8(0x00)] + (1..<1200).map { UInt8(255 - $0 % 256) }
        let answered = device.answered(request.transaction, with: answer)
        #expect(answered.count == 21)
        #expect(try Self.sent(answered) == [Self.Received(channel: channel, command: 0x10, payload: answer)])
        #expect(!device.isBusy)
    }

    @Test func aWrongSequenceNumberIsInvalidSeqAndEndsTheMessage() throws {
        var device = Self.device()
        let channel = try Self.allocate(&device)
        #expect(device.receive(Self.initialization(channel, 0x01, length: 100, [1]), from: 1, now: 0).isEmpty)
        #expect(try Self.sent(device.receive(Self.continuation(channel, 1), from: 1, now: 0)) == [Self.error(channel, .invalidSequence)])
        #expect(!device.isBusy)
        // The continuation the client meant next is spurious now: ignored.
        #expect(device.receive(Self.continuation(channel, 0), from: 1, now: 0).isEmpty)
        // A new message on the channel mid-message breaks the sequence too.
        _ = device.receive(Self.initialization(channel, 0x01, length: 100, [1]), from: 1, now: 0)
        #expect(try Self.sent(device.receive(Self.initialization(channel, 0x01, length: 1, [1]), from: 1, now: 0)) == [Self.error(channel, .invalidSequence)])
        #expect(!device.isBusy)
    }

    @Test func aLengthPastTheKeysMaxMsgSizeIsInvalidLenAtOnce() throws {
        var device = Self.device()
        let channel = try Self.allocate(&device)
        #expect(try Self.sent(device.receive(Self.initialization(channel, 0x10, length: 1201, [4]), from: 1, now: 0)) == [Self.error(channel, .invalidLength)])
        #expect(!device.isBusy)
        #expect(try Self.sent(device.receive(Self.initialization(channel, 0x01, length: 0xFFFF), from: 1, now: 0)) == [Self.error(channel, .invalidLength)])
        // 1,200 is taken.
        #expect(device.receive(Self.initialization(channel, 0x01, length: 1200), from: 1, now: 0).isEmpty)
        #expect(device.isBusy)
    }

    @Test func cborWithoutItsCommandByteMsgWithoutItsHeaderAndInitOfAnotherLengthAreInvalidLen() throws {
        var device = Self.device(capabilities: 0x05)
        let channel = try Self.allocate(&device)
        #expect(try Self.sent(device.receive(Self.initialization(channel, 0x10, length: 0), from: 1, now: 0)) == [Self.error(channel, .invalidLength)])
        #expect(try Self.sent(device.receive(Self.initialization(channel, 0x03, length: 3, [0, 1, 0]), from: 1, now: 0)) == [Self.error(channel, .invalidLength)])
        #expect(try Self.sent(device.receive(Self.initialization(channel, 0x06, length: 7, [1, 2, 3, 4, 5, 6, 7]), from: 1, now: 0))
            == [Self.error(channel, .invalidLength)])
        #expect(try Self.sent(device.receive(Self.initialization(channel, 0x08, length: 1, [1]), from: 1, now: 0)) == [Self.error(channel, .invalidLength)])
        #expect(!device.isBusy)
    }

    @Test func anUnknownCommandOrOneTheKeyDoesNotOfferIsInvalidCmd() throws {
        var device = Self.device(capabilities: 0x04 | 0x08)  // CBOR, NMSG: no MSG, no WINK
        let channel = try Self.allocate(&device)
        for command: UInt8 in [0x03, 0x08, 0x3B, 0x3F, 0x40, 0x7F, 0x00] {
            #expect(try Self.sent(device.receive(Self.initialization(channel, command, length: 4, [0, 1, 0, 0]), from: 1, now: 0))
                == [Self.error(channel, .invalidCommand)], "command \(command)")
        }
        #expect(!device.isBusy)
    }

    @Test func anotherChannelIsBusyWhileAMessageArrivesAndWhileTheKeyAnswersIt() throws {
        var device = Self.device()
        let first = try Self.allocate(&device, from: 1), second = try Self.allocate(&device, from: 2)
        let payload = [UInt8(0x04)] + [UInt8](repeating: 0xEE, count: 99)
        let reports = Self.message(first, 0x10, payload)
        #expect(device.receive(reports[0], from: 1, now: 0).isEmpty)
        // Mid-message: every new message of another channel, an INIT on broadcast too, is busy.
        #expect(try Self.sent(device.receive(Self.initialization(second, 0x01, length: 1, [1]), from: 2, now: 1), to: 2) == [Self.error(second, .channelBusy)])
        #expect(try Self.sent(device.receive(Self.initialization(0xFFFF_FFFF, 0x06, length: 8, [1, 2, 3, 4, 5, 6, 7, 8]), from: 2, now: 1), to: 2)
            == [Self.error(0xFFFF_FFFF, .channelBusy)])
        // Another channel's continuation is spurious: ignored, the message goes on.
        #expect(device.receive(Self.continuation(second, 0, [9]), from: 2, now: 1).isEmpty)
        let request = try #require(Self.requests(device.receive(reports[1], from: 1, now: 2)).first)
        #expect(request.payload == payload)
        // While the key answers.
        #expect(try Self.sent(device.receive(Self.initialization(second, 0x10, length: 1, [4]), from: 2, now: 3), to: 2) == [Self.error(second, .channelBusy)])
        // The first channel's own new message is busy too.
        #expect(try Self.sent(device.receive(Self.initialization(first, 0x01, length: 1, [1]), from: 1, now: 3), to: 1) == [Self.error(first, .channelBusy)])
        _ = device.answered(request.transaction, with: [0])
        #expect(try Self.sent(device.receive(Self.initialization(second, 0x01, length: 1, [5]), from: 2, now: 4), to: 2)
            == [Self.Received(channel: second, command: 0x01, payload: [5])])
    }

    @Test func cancelOnTheChannelCancelsItsRequestAndIsNeverAnswered() throws {
        var device = Self.device()
        let first = try Self.allocate(&device, from: 1), second = try Self.allocate(&device, from: 2)
        let request = try #require(Self.requests(device.receive(Self.initialization(first, 0x10, length: 1, [0x0B]), from: 1, now: 0)).first)
        // Another channel's cancel touches nothing and is not answered either.
        #expect(device.receive(Self.initialization(second, 0x11, length: 0), from: 2, now: 1).isEmpty)
        let outputs = device.receive(Self.initialization(first, 0x11, length: 0), from: 1, now: 1)
        guard case .cancel(let transaction)? = outputs.first, outputs.count == 1 else { Issue.record("not one cancel: \(outputs)"); return }
        #expect(transaction == request.transaction)
        // The key's answer (CTAP2_ERR_KEEPALIVE_CANCEL) ends the transaction, on the request's channel.
        #expect(try Self.sent(device.answered(request.transaction, with: [0x2D])) == [Self.Received(channel: first, command: 0x10, payload: [0x2D])])
        #expect(!device.isBusy)
    }

    @Test func initOnTheBusyChannelAbortsItsRequestAndItsAnswerGoesNowhere() throws {
        var device = Self.device()
        let channel = try Self.allocate(&device)
        let request = try #require(Self.requests(device.receive(Self.initialization(channel, 0x10, length: 1, [0x0B]), from: 1, now: 0)).first)
        let outputs = device.receive(Self.initialization(channel, 0x06, length: 8, [8, 7, 6, 5, 4, 3, 2, 1]), from: 1, now: 1)
        guard case .cancel(let transaction)? = outputs.first else { Issue.record("no cancel: \(outputs)"); return }
        #expect(transaction == request.transaction)
        #expect(try Self.sent(outputs).map(\.command) == [0x06])
        #expect(device.answered(request.transaction, with: [0x2D]).isEmpty)
        #expect(!device.isBusy)
    }

    @Test func aHalfMessageTimesOutAfter750msAndTheKeyIsFreeForOthers() throws {
        var device = Self.device()
        let first = try Self.allocate(&device, from: 1), second = try Self.allocate(&device, from: 2)
        #expect(device.receive(Self.initialization(first, 0x01, length: 200, [1]), from: 1, now: 1000).isEmpty)
        #expect(device.receive(Self.continuation(first, 0, [2]), from: 1, now: 1500).isEmpty)
        #expect(device.nextDeadline == 2250)
        // The timeout counts from the last packet.
        #expect(device.expire(now: 2249).isEmpty)
        #expect(device.isBusy)
        #expect(try Self.sent(device.expire(now: 2250), to: 1) == [Self.error(first, .messageTimeout)])
        #expect(!device.isBusy)
        #expect(try Self.sent(device.receive(Self.initialization(second, 0x01, length: 1, [3]), from: 2, now: 2251), to: 2)
            == [Self.Received(channel: second, command: 0x01, payload: [3])])
        // A report arriving after the deadline finds it expired first: told once, and its
        // continuation ignored.
        _ = device.receive(Self.initialization(first, 0x01, length: 200, [1]), from: 1, now: 3000)
        #expect(try Self.sent(device.receive(Self.continuation(first, 0, [2]), from: 1, now: 4000), to: 1) == [Self.error(first, .messageTimeout)])
        #expect(!device.isBusy)
    }

    @Test func aClientGoneDropsItsHalfMessageAndCancelsItsRequestAtOnce() throws {
        var device = Self.device()
        let first = try Self.allocate(&device, from: 1), second = try Self.allocate(&device, from: 2)
        _ = device.receive(Self.initialization(first, 0x01, length: 100, [1]), from: 1, now: 0)
        #expect(device.disconnected { $0 == 2 }.isEmpty && device.isBusy)  // another client: nothing changes
        #expect(device.disconnected { $0 == 1 }.isEmpty)
        #expect(!device.isBusy)
        let request = try #require(Self.requests(device.receive(Self.initialization(second, 0x10, length: 1, [0x0B]), from: 2, now: 1)).first)
        let outputs = device.disconnected { $0 == 2 }
        guard case .cancel(let transaction)? = outputs.first, outputs.count == 1 else { Issue.record("not one cancel: \(outputs)"); return }
        #expect(transaction == request.transaction)
    }

    @Test func lockKeepsOtherChannelsOutUntilItEndsOrIsReleased() throws {
        var device = Self.device()
        let first = try Self.allocate(&device, from: 1), second = try Self.allocate(&device, from: 2)
        #expect(try Self.sent(device.receive(Self.initialization(first, 0x04, length: 1, [2]), from: 1, now: 0)) == [Self.Received(channel: first, command: 0x04, payload: [])])
        #expect(try Self.sent(device.receive(Self.initialization(second, 0x01, length: 1, [1]), from: 2, now: 1999), to: 2) == [Self.error(second, .channelBusy)])
        #expect(try Self.sent(device.receive(Self.initialization(first, 0x01, length: 1, [1]), from: 1, now: 1999)).map(\.command) == [0x01])
        #expect(try Self.sent(device.receive(Self.initialization(second, 0x01, length: 1, [1]), from: 2, now: 2000), to: 2).map(\.command) == [0x01])
        _ = device.receive(Self.initialization(first, 0x04, length: 1, [10]), from: 1, now: 3000)
        _ = device.receive(Self.initialization(first, 0x04, length: 1, [0]), from: 1, now: 3001)
        #expect(try Self.sent(device.receive(Self.initialization(second, 0x01, length: 1, [1]), from: 2, now: 3002), to: 2).map(\.command) == [0x01])
        #expect(try Self.sent(device.receive(Self.initialization(first, 0x04, length: 1, [11]), from: 1, now: 3003)) == [Self.error(first, .invalidParameter)])
        #expect(try Self.sent(device.receive(Self.initialization(first, 0x04, length: 2, [1, 1]), from: 1, now: 3003)) == [Self.error(first, .invalidLength)])
    }

    @Test func powerOffForgetsEveryChannelAndCancelsTheRequestInFlight() throws {
        var device = Self.device()
        let channel = try Self.allocate(&device)
        let request = try #require(Self.requests(device.receive(Self.initialization(channel, 0x10, length: 1, [0x0B]), from: 1, now: 0)).first)
        let outputs = device.powerOff()
        guard case .cancel(let transaction)? = outputs.first, outputs.count == 1 else { Issue.record("not one cancel: \(outputs)"); return }
        #expect(transaction == request.transaction)
        #expect(device.allocatedChannels.isEmpty && !device.isBusy)
        #expect(device.answered(request.transaction, with: [0x2D]).isEmpty)
        #expect(try Self.sent(device.receive(Self.initialization(channel, 0x01, length: 1, [1]), from: 1, now: 1)) == [Self.error(channel, .invalidChannel)])
    }

    @Test func channelsPastTheLimitForgetTheLeastRecentlyUsed() throws {
        var device = Self.device(channels: [])
        let first = try Self.allocate(&device)
        var others = [UInt32]()
        for _ in 1..<Device.channelLimit { others.append(try Self.allocate(&device)) }
        // The first is used again: the second is now the least recently used.
        _ = device.receive(Self.initialization(first, 0x01, length: 0), from: 1, now: 0)
        _ = try Self.allocate(&device)
        #expect(device.allocatedChannels.count == Device.channelLimit)
        #expect(device.allocatedChannels.contains(first) && !device.allocatedChannels.contains(others[0]))
    }

    @Test func aReportOfAnotherSizeIsIgnored() {
        var device = Self.device()
        #expect(device.receive(Array(Self.initialization(0xFFFF_FFFF, 0x06, length: 8, [1, 2, 3, 4, 5, 6, 7, 8]).prefix(63)), from: 1, now: 0).isEmpty)
        #expect(device.receive(Self.initialization(0xFFFF_FFFF, 0x06, length: 8, [1, 2, 3, 4, 5, 6, 7, 8]) + [0], from: 1, now: 0).isEmpty)
        #expect(device.allocatedChannels.isEmpty)
    }
}
