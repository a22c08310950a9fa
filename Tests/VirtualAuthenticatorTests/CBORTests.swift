import Foundation
import Testing
@testable import VirtualAuthenticator

/// Bytes from a hex string; spaces are ignored ("a5 01 02" → [0xa5, 0x01, 0x02]). Shared by the
/// VirtualAuthenticator test files.
func hexBytes(_ text: String) -> [UInt8] {
    let digits = Array(text.filter { !$0.isWhitespace })
    precondition(digits.count % 2 == 0, "odd number of hex digits")
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
}

/// `n` arrays nested inside each other, the innermost empty: 0x81 … 0x81 0x80.
private func nestedArrays(_ n: Int) -> [UInt8] {
    [UInt8](repeating: 0x81, count: n - 1) + [0x80]
}

private func expectDecodingFails(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(throws: CBORValue.DecodingError.self, sourceLocation: sourceLocation) { try CBORValue.decode(bytes) }
}

// MARK: - Encoding

@Test(arguments: [
    (0, "00"), (23, "17"), (24, "18 18"), (255, "18 ff"), (256, "19 01 00"), (65535, "19 ff ff"),
    (65536, "1a 00 01 00 00"), (4_294_967_295, "1a ff ff ff ff"), (4_294_967_296, "1b 00 00 00 01 00 00 00 00"),
    (-1, "20"), (-24, "37"), (-25, "38 18"), (-256, "38 ff"), (-257, "39 01 00"), (-65537, "3a 00 01 00 00"),
])
func integersUseTheShortestForm(value: Int, expected: String) {
    #expect(CBORValue.int(value).encoded() == hexBytes(expected))
}

@Test func largest64BitIntegersUseEightByteArguments() {
    #expect(CBORValue.unsigned(.max).encoded() == hexBytes("1b ff ff ff ff ff ff ff ff"))
    #expect(CBORValue.negative(.max).encoded() == hexBytes("3b ff ff ff ff ff ff ff ff"))
}

@Test func byteAndTextStringsCarryTheirLengthInTheHeader() {
    #expect(CBORValue.bytes([]).encoded() == [0x40])
    #expect(CBORValue.bytes([1, 2, 3]).encoded() == hexBytes("43 01 02 03"))
    let long = [UInt8](repeating: 0xAB, count: 24)
    #expect(CBORValue.bytes(long).encoded() == hexBytes("58 18") + long)
    #expect(CBORValue.text("").encoded() == [0x60])
    #expect(CBORValue.text("IETF").encoded() == hexBytes("64 49 45 54 46"))
    #expect(CBORValue.text("ü").encoded() == hexBytes("62 c3 bc"))
}

@Test func arraysBoolsAndNull() {
    #expect(CBORValue.array([.int(1), .array([.int(2), .int(3)])]).encoded() == hexBytes("82 01 82 02 03"))
    #expect(CBORValue.array([]).encoded() == [0x80])
    #expect(CBORValue.bool(false).encoded() == [0xf4])
    #expect(CBORValue.bool(true).encoded() == [0xf5])
    #expect(CBORValue.null.encoded() == [0xf6])
}

@Test func mapKeysAreSortedShorterEncodingFirstThenBytewise() {
    // Given out of order; encoded keys 01 < 03 < 20 < 21 < "fmt" (4 bytes) < "attStmt" (8) < "authData" (9).
    let map = CBORValue.map([
        (.int(3), .int(0)), (.int(-1), .int(1)), (.int(1), .int(2)), (.int(-2), .int(3)),
        (.text("fmt"), .int(4)), (.text("attStmt"), .int(5)), (.text("authData"), .int(6)),
    ])
    #expect(map.encoded() == hexBytes("""
        a7 01 02 03 00 20 01 21 03 63 66 6d 74 04 67 61 74 74 53 74 6d 74 05
        68 61 75 74 68 44 61 74 61 06
        """))
}

@Test func mapKeyLengthBeatsFirstByte() {
    // 24 encodes as 18 18 (two bytes), -1 as 20 (one byte): -1 sorts first although 0x18 < 0x20.
    #expect(CBORValue.map([(.int(24), .bool(true)), (.int(-1), .bool(false))]).encoded() == hexBytes("a2 20 f4 18 18 f5"))
    // "a" (61 61) is shorter than 256 (19 01 00).
    #expect(CBORValue.map([(.int(256), .null), (.text("a"), .null)]).encoded() == hexBytes("a2 61 61 f6 19 01 00 f6"))
}

@Test func nestedMapsAreSortedToo() {
    let inner = CBORValue.map([(.text("b"), .int(2)), (.text("a"), .int(1))])
    #expect(CBORValue.array([inner]).encoded() == hexBytes("81 a2 61 61 01 61 62 02"))
    #expect(CBORValue.map([]).encoded() == [0xa0])
}

@Test func equalityIgnoresTheOrderMapPairsWereGivenIn() {
    let a = CBORValue.map([(.int(1), .int(2)), (.int(3), .int(4))])
    let b = CBORValue.map([(.int(3), .int(4)), (.int(1), .int(2))])
    #expect(a == b)
    #expect(a != CBORValue.map([(.int(1), .int(2)), (.int(3), .int(5))]))
}

// MARK: - Decoding

@Test func decodingWhatWasEncodedGivesTheSameValue() throws {
    let value = CBORValue.map([
        (.text("bytes"), .bytes([0, 1, 2, 0xff])),
        (.text("text"), .text("héllo")),
        (.int(-7), .array([.int(0), .int(-25), .unsigned(.max), .negative(.max), .bool(true), .null])),
        (.int(1), .map([(.text("nested"), .bytes([]))])),
    ])
    let decoded = try CBORValue.decode(value.encoded())
    #expect(decoded == value)
    #expect(decoded[.text("bytes")]?.bytesValue == [0, 1, 2, 0xff])
    #expect(decoded[.text("text")]?.textValue == "héllo")
    #expect(decoded[.int(-7)] == .array([.int(0), .int(-25), .unsigned(.max), .negative(.max), .bool(true), .null]))
    #expect(decoded[.int(1)]?[.text("nested")]?.bytesValue == [])
}

@Test func decodedIntegersKeepTheirSign() throws {
    #expect(try CBORValue.decode(hexBytes("38 18")).intValue == -25)
    #expect(try CBORValue.decode(hexBytes("19 01 00")).intValue == 256)
    #expect(try CBORValue.decode(hexBytes("1b ff ff ff ff ff ff ff ff")).intValue == nil)  // does not fit an Int
}

@Test func decodePrefixReportsTheBytesUsed() throws {
    let (value, used) = try CBORValue.decodePrefix(hexBytes("43 01 02 03 ff ff"))
    #expect(value == .bytes([1, 2, 3]))
    #expect(used == 4)
}

@Test func decodeRejectsTrailingBytes() {
    expectDecodingFails(hexBytes("01 02"))
    expectDecodingFails(hexBytes("a0 00"))
}

@Test(arguments: ["", "18", "19 01", "43 01 02", "82 01", "a1 01", "63 66 6d"])
func decodeRejectsTruncatedInput(hex: String) {
    expectDecodingFails(hexBytes(hex))
}

@Test(arguments: ["5f 41 01 ff", "5f ff", "7f 61 61 ff"])
func decodeRejectsIndefiniteLengthStrings(hex: String) {
    expectDecodingFails(hexBytes(hex))
}

@Test(arguments: [
    "c0 74 32 30 31 33 2d 30 33 2d 32 31 54 32 30 3a 30 34 3a 30 30 5a",  // RFC 8949 date/time tag
    "c2 41 01",  // bignum
    "a1 01 c1 00",  // a tag as a map value
])
func decodeRejectsTags(hex: String) {
    expectDecodingFails(hexBytes(hex))
}

@Test func decodeRejectsSimpleValuesOtherThanBoolAndNull() {
    expectDecodingFails(hexBytes("f7"))  // undefined
    expectDecodingFails(hexBytes("f0"))  // simple(16)
}

@Test func decodeRejectsFloatsWithoutCrashing() async {
    // In a child process, because a failure here is an abort (libcbor's assertion), not a throw.
    await #expect(processExitsWith: .success) {
        let floats: [[UInt8]] = [[0xf9, 0x3c, 0x00], [0xfa, 0x3f, 0x80, 0x00, 0x00], [0xfb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0]]
        for bytes in floats where (try? CBORValue.decode(bytes)) != nil { exit(1) }
    }
}

@Test func decodeRejectsInvalidUTF8Text() {
    expectDecodingFails(hexBytes("62 c3 28"))
}

@Test func decodeAcceptsNestingUpTo16Levels() throws {
    #expect(try CBORValue.decode(nestedArrays(16)).encoded() == nestedArrays(16))
}

@Test func decodeRejectsNestingDeeperThan16() {
    expectDecodingFails(nestedArrays(17))
    expectDecodingFails(nestedArrays(100))
    // Maps count as levels too: 17 maps {1: {1: … {}}}.
    expectDecodingFails([UInt8](repeating: 0, count: 16).flatMap { _ in [0xa1, 0x01] } + [0xa0])
}
