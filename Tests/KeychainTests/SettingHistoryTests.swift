@testable import Keychain
import Testing

private func delays(_ entries: [(String, UInt64)]) -> SettingHistory<DelayRange> {
    var history = SettingHistory<DelayRange>()
    for (text, since) in entries { history.set(DelayRange(parsing: text)!, from: since) }
    return history
}

@Test func aSettingHistoryAnswersWithTheValueInForce() {
    var history = delays([("0s", 0), ("2s", 10), ("1s..5s", 20)])
    #expect(history.value(at: 9)?.description == "0s")
    #expect(history.value(at: 10)?.description == "2s")
    #expect(history.value(at: 25)?.description == "1s..5s")
    #expect(SettingHistory<DelayRange>().value(at: 5) == nil)
    #expect(delays([("2s", 10)]).value(at: 9) == nil)
    // A change dated before later ones (a clock set back) replaces them; an unchanged value adds nothing.
    history.set(DelayRange(parsing: "3s")!, from: 15)
    #expect(history.entries.map(\.since) == [0, 10, 15] && history.value(at: 25)?.description == "3s")
    history.set(DelayRange(parsing: "3s")!, from: 30)
    #expect(history.entries.count == 3)
}

@Test func aSettingHistoryRoundTripsAndRefusesMalformedFields() {
    let history = delays([("0s", 0), ("2s", 10), ("1s..5s", 20)])
    #expect(SettingHistory<DelayRange>(bytes: history.bytes) == history)
    #expect(history.bytes.count == 3 * 24)
    // A bare range (a field from before histories) is in force since 0.
    let legacy = SettingHistory<DelayRange>(bytes: DelayRange(parsing: "2s")!.bytes)
    #expect(legacy?.entries.count == 1 && legacy?.value(at: 0)?.description == "2s")
    // Times not ascending, a ragged length, a range upside down: refused.
    let bytes = history.bytes
    #expect(SettingHistory<DelayRange>(bytes: Array(bytes[24..<48] + bytes[0..<24])) == nil)
    #expect(SettingHistory<DelayRange>(bytes: Array(bytes.dropLast())) == nil)
    var upsideDown = bytes
    upsideDown[8 + 7] = 9  // lower 9 ms > upper 0 ms
    #expect(SettingHistory<DelayRange>(bytes: upsideDown) == nil)
    #expect(SettingHistory<Seed>(bytes: [0, 0, 0, 0, 0, 0, 0, 7])?.value(at: 0)?.value == 7)
}
