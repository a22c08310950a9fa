@testable import Keychain
import Testing

private func at(_ ms: UInt64, _ order: UInt64 = 0) -> Instant { Instant(ms: ms, order: order) }

private func delays(_ entries: [(String, Instant)]) -> SettingHistory<DelayRange> {
    var history = SettingHistory<DelayRange>()
    for (text, since) in entries { history.set(DelayRange(parsing: text)!, from: since) }
    return history
}

@Test func instantsOrderByMillisecondThenWriteOrder() {
    #expect(at(5, 9) < at(6, 0) && at(5, 1) < at(5, 2) && at(5, 2) < .endOf(5))
    #expect(at(5, 3).after(0) == at(5, 3) && at(5, 3).after(10) == at(15, 0))
    #expect(at(UInt64.max - 1, 3).after(10).ms == UInt64.max)
    #expect(Instant(bytes: at(7, 8).bytes) == at(7, 8) && Instant(bytes: [0, 1]) == nil)
}

@Test func aSettingHistoryAnswersWithTheValueInForce() {
    var history = delays([("0s", at(0)), ("2s", at(10, 4)), ("1s..5s", at(20))])
    #expect(history.value(at: at(10, 3))?.description == "0s")  // written just before the change
    #expect(history.value(at: at(10, 4))?.description == "2s")
    #expect(history.value(at: .endOf(25))?.description == "1s..5s")
    #expect(SettingHistory<DelayRange>().value(at: at(5)) == nil)
    #expect(delays([("2s", at(10))]).value(at: at(9)) == nil)
    // A change dated before later ones (a clock set back) replaces them; an unchanged value adds nothing.
    history.set(DelayRange(parsing: "3s")!, from: at(15))
    #expect(history.entries.map(\.since) == [at(0), at(10, 4), at(15)] && history.value(at: at(25))?.description == "3s")
    history.set(DelayRange(parsing: "3s")!, from: at(30))
    #expect(history.entries.count == 3)
}

@Test func aSettingHistoryRoundTripsAndRefusesMalformedFields() {
    let history = delays([("0s", at(0)), ("2s", at(10, 1)), ("1s..5s", at(20))])
    #expect(SettingHistory<DelayRange>(bytes: history.bytes) == history)
    #expect(history.bytes.count == 3 * 32)
    // A bare range (a field from before histories) is in force from the beginning.
    let legacy = SettingHistory<DelayRange>(bytes: DelayRange(parsing: "2s")!.bytes)
    #expect(legacy?.entries.count == 1 && legacy?.value(at: .zero)?.description == "2s")
    // Times not ascending, a ragged length, a range upside down or beyond the longest delay: refused.
    let bytes = history.bytes
    #expect(SettingHistory<DelayRange>(bytes: Array(bytes[32..<64] + bytes[0..<32])) == nil)
    #expect(SettingHistory<DelayRange>(bytes: Array(bytes.dropLast())) == nil)
    var upsideDown = bytes
    upsideDown[16 + 7] = 9  // lower 9 ms > upper 0 ms
    #expect(SettingHistory<DelayRange>(bytes: upsideDown) == nil)
    #expect(SettingHistory<DelayRange>(bytes: [UInt8](repeating: 0xff, count: 16)) == nil)
    #expect(SettingHistory<Seed>(bytes: [0, 0, 0, 0, 0, 0, 0, 7])?.value(at: .zero)?.value == 7)
}
