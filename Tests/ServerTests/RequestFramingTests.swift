import Testing
@testable import Server

/// A request's framing judged from its head (RFC 9112 §6.1, §6.3): what two readers could read
/// two ways is refused before the body is read.
@Suite struct RequestFramingTests {
    func verdict(_ version: String = "HTTP/1.1", lengths: [String] = [], encodings: [String] = [], limit: Int = 1 << 20) -> Int? {
        RequestFraming.problem(version: version, contentLengths: lengths, transferEncodings: encodings, bodyLimit: limit)?.status
    }

    @Test func aPlainLengthOrChunkedOnceIsRead() {
        #expect(verdict() == nil)
        #expect(verdict(lengths: ["12"]) == nil)
        #expect(verdict(lengths: ["2", "2"]) == nil)           // the same length again is that length
        #expect(verdict(lengths: ["2, 2"]) == nil)
        #expect(verdict(encodings: ["chunked"]) == nil)
        #expect(verdict(encodings: ["Chunked"]) == nil)
    }

    @Test func anAmbiguousEndIsRefused() {
        #expect(verdict(lengths: ["2"], encodings: ["chunked"]) == 400)
        #expect(verdict("HTTP/1.0", encodings: ["chunked"]) == 400)
        #expect(verdict(lengths: ["2", "3"]) == 400)
        #expect(verdict(lengths: ["2, 3"]) == 400)
        #expect(verdict(lengths: ["2,"]) == 400)
        #expect(verdict(lengths: ["+2"]) == 400)
        #expect(verdict(lengths: ["99999999999999999999999"]) == 400)
        #expect(verdict(encodings: ["gzip"]) == 400)
        #expect(verdict(encodings: ["chunked, gzip"]) == 400)
    }

    @Test func aCodingBeforeChunkedOrChunkedTwiceIsNotImplemented() {
        #expect(verdict(encodings: ["gzip, chunked"]) == 501)
        #expect(verdict(encodings: ["chunked", "chunked"]) == 501)
        #expect(verdict(encodings: ["gzip", " CHUNKED ; x=1"]) == 501)
    }

    @Test func aDeclaredBodyOverTheLimitIsRefusedUnread() {
        #expect(verdict(lengths: ["11"], limit: 10) == 413)
        #expect(verdict(lengths: ["10"], limit: 10) == nil)
        let problem = RequestFraming.problem(version: "HTTP/1.1", contentLengths: ["11"], transferEncodings: [], bodyLimit: 10)
        #expect(String(decoding: problem?.response.body ?? [], as: UTF8.self)
                == #"{"type":"about:blank","title":"badInput","status":413,"detail":"the body is larger than the server accepts","name":"badInput"}"#)
    }
}
