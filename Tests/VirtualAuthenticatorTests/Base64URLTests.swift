import Testing
@testable import VirtualAuthenticator

/// The one-pass base64url decoder and the encoder against plain reference versions of the rules.
@Suite struct Base64URLTests {
    /// The rules spelled out: lenient alphabet and `=` padding at the end, no group of one, zero
    /// trailing bits; strict: the URL-safe alphabet only.
    static func reference(_ text: String, strict: Bool) -> [UInt8]? {
        let urlSafe = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        if strict, !text.utf8.allSatisfy(urlSafe.contains) { return nil }
        var values = [UInt8]()
        var sawPadding = false
        for c in text.utf8 {
            if c == UInt8(ascii: "=") { sawPadding = true; continue }
            if sawPadding { return nil }
            if let i = urlSafe.firstIndex(of: c) { values.append(UInt8(i)) }
            else if c == UInt8(ascii: "+") { values.append(62) }
            else if c == UInt8(ascii: "/") { values.append(63) }
            else { return nil }
        }
        if values.count % 4 == 1 { return nil }
        var bits = values.flatMap { v in (0..<6).reversed().map { (v >> $0) & 1 } }
        let whole = bits.count / 8 * 8
        guard bits[whole...].allSatisfy({ $0 == 0 }) else { return nil }
        bits.removeLast(bits.count - whole)
        return stride(from: 0, to: bits.count, by: 8).map { i in bits[i..<i + 8].reduce(0) { $0 << 1 | $1 } }
    }

    @Test func decodingAgreesWithTheRulesOnRandomText() {
        var generator = SystemRandomNumberGenerator()
        let characters = Array("ABCZaz09-_+/=. é".utf8)
        for _ in 0..<20_000 {
            let length = Int.random(in: 0...9, using: &generator)
            let text = String(decoding: (0..<length).map { _ in characters.randomElement(using: &generator)! }, as: UTF8.self)
            #expect(Base64URL.decode(text) == Self.reference(text, strict: false), "\(text)")
            #expect(Base64URL.decodeStrict(text) == Self.reference(text, strict: true), "\(text)")
        }
    }

    @Test func everyLengthRoundTrips() {
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255) }
            let text = Base64URL.encode(bytes)
            var appended = Array("x".utf8)
            Base64URL.append(bytes, to: &appended)
            #expect(text.utf8.count == (length * 4 + 2) / 3 && Array(text.utf8) == Array(appended.dropFirst()))
            #expect(Base64URL.decodeStrict(text) == bytes && Base64URL.decode(text) == bytes)
        }
    }
}
