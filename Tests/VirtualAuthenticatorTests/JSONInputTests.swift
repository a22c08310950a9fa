import Foundation
import Testing
@testable import VirtualAuthenticator

/// ``JSONInput`` reads what it takes exactly as `JSONSerialization` does, and leaves the rest to it.
@Suite struct JSONInputTests {
    /// The two trees are the same to ``WebIDL``: same kinds, strings, numbers and booleans.
    static func same(_ a: Any, _ b: Any) -> Bool {
        switch (a, b) {
        case (is NSNull, is NSNull): return true
        case let (x as String, y as String): return x == y
        case let (x as NSNumber, y as NSNumber):
            return WebIDL.isBoolean(x) == WebIDL.isBoolean(y) && WebIDL.number(x) == WebIDL.number(y)
                && x is NSDecimalNumber == y is NSDecimalNumber
        case let (x as [Any], y as [Any]): return x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
        case let (x as [String: Any], y as [String: Any]):
            return Set(x.keys) == Set(y.keys) && x.allSatisfy { key, value in same(value, y[key]!) }
        default: return false
        }
    }

    static let plain = [
        #"{}"#,
        #" { "a" : [ ] , "b" : { } } "#,
        #"{"rp":{"id":"bench.example","name":"Bench"},"user":{"id":"Yg","name":"b","displayName":"B"},"challenge":"Y2hhbGxlbmdlLWNoYWxsZW5nZQ","pubKeyCredParams":[{"type":"public-key","alg":-7},{"type":"public-key","alg":-257}],"authenticatorSelection":{"residentKey":"required","userVerification":"discouraged"},"attestation":"none","timeout":60000}"#,
        #"{"rpId":"bench.example","challenge":"Y2hh","userVerification":"discouraged","allowCredentials":[]}"#,
        "{\"n\":[0,-1,7,999999999999999,-999999999999999,true,false,null],\"s\":\"bücher ✓ 😀\",\"\":\"\"}",
        "{\"a\":1,\"a\":[2]}",
        "\t{\r\n\"deep\":[[[[{\"x\":[null]}]]]]}\n",
    ]

    @Test(arguments: plain)
    func plainDocumentsReadAsJSONSerializationReadsThem(_ text: String) throws {
        let fast = try #require(JSONInput.object(Array(text.utf8)))
        let reference = try JSONSerialization.jsonObject(with: Data(text.utf8))
        #expect(Self.same(fast, reference))
    }

    /// Escapes, fractions, exponents, long or odd numbers, bad UTF-8, deep nesting and malformed
    /// text are left to JSONSerialization.
    static let leftAlone: [[UInt8]] = [
        #"{"a":"\n"}"#, #"{"a":"\u00e9"}"#, #"{"a":1.5}"#, #"{"a":1e3}"#, #"{"a":-0}"#, #"{"a":01}"#,
        #"{"a":1234567890123456}"#, #"{"a":12345678901234567890123}"#, #"{"a":tru}"#, #"{"a":truex}"#,
        #"{"a":1,}"#, #"{"a" 1}"#, #"{"a":[1,]}"#, #"{"a":1}x"#, #"[1]"#, #""a""#, "", "{", #"{"a":"#,
        "{\"a\":\"\u{1}\"}", #"{'a':1}"#, #"{"a":+1}"#, #"{"a":NaN}"#, "\u{FEFF}{}",
        // A raw U+FEFF that begins a string or a name: Foundation's reader drops it.
        "{\"a\":\"\u{FEFF}AAAA\"}", "{\"\u{FEFF}a\":1}", "{\"a\":[\"\u{FEFF}\u{FEFF}x\"]}",
        String(repeating: "[", count: 70) + String(repeating: "]", count: 70),
    ].map { Array($0.utf8) } + [
        [0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xC3, 0x22, 0x7D],  // {"a":"<lone lead byte>"}
        [0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D],
        Array("{\"a\":".utf8) + Array(repeating: UInt8(ascii: "["), count: 65) + Array(repeating: UInt8(ascii: "]"), count: 65) + [0x7D],
    ]

    @Test(arguments: leftAlone)
    func anythingElseIsLeftToJSONSerialization(_ bytes: [UInt8]) {
        #expect(JSONInput.object(bytes) == nil)
    }

    /// Every prefix and every one-byte change of an options document: read the same, or left alone.
    @Test func mutatedDocumentsNeverReadDifferently() throws {
        let document = Array(Self.plain[2].utf8)
        var variants = (0...document.count).map { Array(document.prefix($0)) }
        for i in document.indices {
            for replacement: UInt8 in [0x20, 0x22, 0x2C, 0x2D, 0x30, 0x31, 0x3A, 0x5B, 0x5C, 0x5D, 0x7B, 0x7D, 0x65, 0x2E, 0x80] {
                var changed = document
                changed[i] = replacement
                variants.append(changed)
            }
        }
        var read = 0
        for variant in variants {
            guard let fast = JSONInput.object(variant) else { continue }
            read += 1
            let reference = try JSONSerialization.jsonObject(with: Data(variant))
            #expect(Self.same(fast, reference), "\(String(decoding: variant, as: UTF8.self))")
        }
        #expect(read > 100)
    }
}
