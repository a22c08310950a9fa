import CTAP
import Foundation
import Session
import Testing

/// A client of a key: the reports the key sent it, as they came, with when.
final class ReportLog: HIDEndpoint, @unchecked Sendable {
    private let condition = NSCondition()
    private var received = [(report: [UInt8], at: ContinuousClock.Instant)]()

    func send(_ report: [UInt8]) {
        condition.withLock {
            received.append((report, .now))
            condition.broadcast()
        }
    }

    var reports: [(report: [UInt8], at: ContinuousClock.Instant)] { condition.withLock { received } }

    /// Waits (30 s at most: a loaded machine is slow, not wrong) until `done` holds of the reports
    /// (given to it: it must not read ``reports``, whose lock the wait holds).
    @discardableResult
    func wait(for what: String, until done: ([(report: [UInt8], at: ContinuousClock.Instant)]) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: 30)
        condition.lock()
        defer { condition.unlock() }
        while !done(received) {
            guard condition.wait(until: deadline) || done(received) else {
                Issue.record("not within 30 s: \(what)")
                return false
            }
        }
        return true
    }
}

/// The key on the wire, run for real: a device of a throw-away account answering on its worker
/// while the reports keep coming, KEEPALIVE while it waits for a touch, CANCEL getting through,
/// a client that stops mid-message timed out, the power cut.
@Suite(.serialized) struct HIDKeyTests {
    typealias Framing = CTAPHIDFramingTests

    typealias Heard = [(report: [UInt8], at: ContinuousClock.Instant)]

    /// The key's reports to `log` on `channel` whose command is `command`.
    static func reports(_ log: ReportLog, _ channel: UInt32, _ command: UInt8) -> Heard { matching(log.reports, channel, command) }

    static func matching(_ heard: Heard, _ channel: UInt32, _ command: UInt8) -> Heard {
        heard.filter { Array($0.report[0..<4]) == Framing.id(channel) && $0.report[4] == 0x80 | command }
    }

    /// A channel of the key's, allocated for `log`.
    static func allocate(_ key: HIDKey, _ log: ReportLog) throws -> UInt32 {
        let before = log.reports.count
        key.receive(Framing.initialization(0xFFFF_FFFF, 0x06, length: 8, [9, 8, 7, 6, 5, 4, 3, 2]), from: log)
        log.wait(for: "the INIT answer") { $0.count > before }
        let answer = log.reports[before].report
        try #require(answer[4] == 0x86 && Array(answer[7..<15]) == [9, 8, 7, 6, 5, 4, 3, 2])
        return answer[15..<19].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    @Test func whileTheButtonTouchWaitsKeepalivesSayUpNeededEvery100msAndTheAnswerFollowsTheTouch() throws {
        let touch = Touch(policy: .button)
        let fixture = try KeyFixture(touch: touch)
        let key = HIDKey(handler: fixture.key)
        defer { key.stop() }
        let log = ReportLog()
        let channel = try Self.allocate(key, log)
        key.receive(Framing.initialization(channel, 0x10, length: 1, [0x0B]), from: log)  // authenticatorSelection
        log.wait(for: "four keepalives") { Self.matching($0, channel, 0x3B).count >= 4 }
        let keepalives = Self.reports(log, channel, 0x3B)
        try #require(keepalives.count >= 4)
        #expect(keepalives.allSatisfy { $0.report[5...7] == [0, 1, 2] })  // BCNT 1, STATUS_UPNEEDED
        // Every 100 ms, not in a burst: the fourth comes at least 200 ms after the first (the
        // first is sent at once, as the status changes).
        #expect(keepalives[3].at - keepalives[0].at >= .milliseconds(250))
        #expect(Self.reports(log, channel, 0x10).isEmpty)
        touch.press()
        log.wait(for: "the answer") { !Self.matching($0, channel, 0x10).isEmpty }
        #expect(Self.reports(log, channel, 0x10).map { Array($0.report[5..<8]) } == [[0, 1, 0x00]])  // CTAP2_OK
    }

    @Test func cancelDuringATouchWaitEndsTheRequestWithKeepaliveCancelAndIsNotAnswered() throws {
        let fixture = try KeyFixture(touch: Touch(policy: .never))
        let key = HIDKey(handler: fixture.key)
        defer { key.stop() }
        let log = ReportLog()
        let channel = try Self.allocate(key, log)
        key.receive(Framing.initialization(channel, 0x10, length: 1, [0x0B]), from: log)
        log.wait(for: "a keepalive UPNEEDED") { Self.matching($0, channel, 0x3B).contains { $0.report[7] == 2 } }
        key.receive(Framing.initialization(channel, 0x11, length: 0), from: log)
        log.wait(for: "the answer") { !Self.matching($0, channel, 0x10).isEmpty }
        #expect(Self.reports(log, channel, 0x10).map { Array($0.report[5..<8]) } == [[0, 1, 0x2D]])  // CTAP2_ERR_KEEPALIVE_CANCEL
        // Nothing answers the cancel itself: the key sent INIT, keepalives and the answer alone.
        #expect(log.reports.allSatisfy { [0x86, 0x3B | 0x80, 0x90].contains($0.report[4]) })
    }

    @Test func anotherClientIsBusyWhileTheKeyWaitsAndIsAnsweredAfter() throws {
        let touch = Touch(policy: .button)
        let fixture = try KeyFixture(touch: touch)
        let key = HIDKey(handler: fixture.key)
        defer { key.stop() }
        let first = ReportLog(), second = ReportLog()
        let mine = try Self.allocate(key, first), theirs = try Self.allocate(key, second)
        key.receive(Framing.initialization(mine, 0x10, length: 1, [0x0B]), from: first)
        first.wait(for: "a keepalive") { !Self.matching($0, mine, 0x3B).isEmpty }
        key.receive(Framing.initialization(theirs, 0x10, length: 1, [0x04]), from: second)
        second.wait(for: "the busy error") { !Self.matching($0, theirs, 0x3F).isEmpty }
        #expect(Self.reports(second, theirs, 0x3F).map { $0.report[7] } == [CTAPHIDError.channelBusy.rawValue])
        touch.press()
        first.wait(for: "the answer") { !Self.matching($0, mine, 0x10).isEmpty }
        key.receive(Framing.initialization(theirs, 0x10, length: 1, [0x04]), from: second)
        second.wait(for: "getInfo's answer") { !Self.matching($0, theirs, 0x10).isEmpty }
        #expect(Self.reports(second, theirs, 0x10).first?.report[7] == 0x00)
        // No keepalive of the first request came after its answer.
        let answered = Self.reports(first, mine, 0x10)[0].at
        #expect(Self.reports(first, mine, 0x3B).allSatisfy { $0.at <= answered })
    }

    @Test func aClientThatStopsMidMessageIsTimedOutAndOthersGoOn() throws {
        let fixture = try KeyFixture()
        let key = HIDKey(handler: fixture.key)
        defer { key.stop() }
        let gone = ReportLog(), other = ReportLog()
        let channel = try Self.allocate(key, gone), theirs = try Self.allocate(key, other)
        let started = ContinuousClock.now
        key.receive(Framing.initialization(channel, 0x01, length: 300, [1, 2, 3]), from: gone)
        // Told without anything more coming from it: the ticker times the message out.
        gone.wait(for: "ERR_MSG_TIMEOUT") { !Self.matching($0, channel, 0x3F).isEmpty }
        #expect(ContinuousClock.now - started >= .milliseconds(750))
        #expect(Self.reports(gone, channel, 0x3F).map { $0.report[7] } == [CTAPHIDError.messageTimeout.rawValue])
        key.receive(Framing.initialization(theirs, 0x01, length: 2, [7, 7]), from: other)
        other.wait(for: "the ping") { !Self.matching($0, theirs, 0x01).isEmpty }
    }

    @Test func aClientWhoseConnectionClosesHasItsTouchWaitCanceled() throws {
        let fixture = try KeyFixture(touch: Touch(policy: .never))
        let key = HIDKey(handler: fixture.key)
        defer { key.stop() }
        let log = ReportLog()
        let channel = try Self.allocate(key, log)
        key.receive(Framing.initialization(channel, 0x10, length: 1, [0x0B]), from: log)
        log.wait(for: "a keepalive") { !Self.matching($0, channel, 0x3B).isEmpty }
        key.disconnected(log)
        // The key stops waiting for a touch nobody can give: it answers at once (into the void).
        log.wait(for: "the answer") { !Self.matching($0, channel, 0x10).isEmpty }
        #expect(Self.reports(log, channel, 0x10).map { $0.report[7] } == [0x2D])
    }

    @Test func powerOffCancelsTheRequestForgetsTheChannelsAnswersNothingAndPowerOnTellsTheKey() throws {
        let fixture = try KeyFixture(touch: Touch(policy: .never))
        let key = HIDKey(handler: fixture.key)
        defer { key.stop() }
        let log = ReportLog()
        let channel = try Self.allocate(key, log)
        key.receive(Framing.initialization(channel, 0x10, length: 1, [0x0B]), from: log)
        log.wait(for: "a keepalive") { !Self.matching($0, channel, 0x3B).isEmpty }
        let poweredAt = fixture.key.poweredAt
        key.powerOff()
        #expect(!key.isPoweredOn)
        let heard = log.reports.count
        key.receive(Framing.initialization(0xFFFF_FFFF, 0x06, length: 8, [1, 1, 1, 1, 1, 1, 1, 1]), from: log)
        key.powerOn()
        let fresh = try Self.allocate(key, log)
        #expect(fresh != channel)
        // The old channel is gone; getInfo on the new one goes through the key's worker after the
        // canceled request, so by its answer the canceled one has finished — and was not answered.
        key.receive(Framing.initialization(channel, 0x01, length: 0), from: log)
        key.receive(Framing.initialization(fresh, 0x10, length: 1, [0x04]), from: log)
        log.wait(for: "getInfo's answer") { !Self.matching($0, fresh, 0x10).isEmpty }
        #expect(Self.reports(log, channel, 0x10).isEmpty)
        #expect(Self.reports(log, channel, 0x3F).map { $0.report[7] } == [CTAPHIDError.invalidChannel.rawValue])
        // The INIT sent while off was not answered: the next report answers the one after power-on.
        #expect(Array(log.reports[heard].report[7..<15]) == [9, 8, 7, 6, 5, 4, 3, 2])
        #expect(fixture.key.poweredAt > poweredAt)
    }
}
