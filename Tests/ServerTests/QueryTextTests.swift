import Testing
@testable import Server

/// The query written again from libmicrohttpd's decoded arguments, and the percent-decoding
/// libmicrohttpd has the path and arguments decoded with.
@Suite struct QueryTextTests {
    func query(_ arguments: [([UInt8], [UInt8]?)]) -> String {
        QueryText.encoded(arguments.map { QueryText.Argument(name: $0.0, value: $0.1) })
    }

    @Test func everyByteButTheUnreservedOnesIsPercentEncoded() {
        #expect(query([(Array("aZ09-._~".utf8), Array("aZ09-._~".utf8))]) == "aZ09-._~=aZ09-._~")
        #expect(query([([0x00, 0x01, 0x7F, 0x80, 0xFF], [0x20, 0x25, 0x26, 0x2B, 0x3D, 0x2F, 0x3F, 0x23])])
                == "%00%01%7F%80%FF=%20%25%26%2B%3D%2F%3F%23")
        #expect(query([(Array("é".utf8), Array("\r\n".utf8))]) == "%C3%A9=%0D%0A")
    }

    @Test func argumentsKeepTheirOrderAndAnArgumentWithoutAValueHasNoEqualsSign() {
        #expect(query([]) == "")
        #expect(query([(Array("flag".utf8), nil)]) == "flag")
        #expect(query([(Array("empty".utf8), [])]) == "empty=")
        #expect(query([(Array("b".utf8), Array("2".utf8)), ([], Array("x".utf8)), (Array("a".utf8), nil), (Array("b".utf8), Array("1".utf8))])
                == "b=2&=x&a&b=1")
    }

    func decoded(_ text: String) -> [UInt8] { QueryText.decoded(Array(text.utf8)) }

    @Test func wellFormedEscapesAreDecodedInEitherCase() {
        #expect(decoded("%41%62%2f%2F") == Array("Ab//".utf8))
        #expect(decoded("a%20b%FFc") == [0x61, 0x20, 0x62, 0xFF, 0x63])
        #expect(decoded("") == [])
    }

    @Test func malformedEscapesAreLeftAsTheyCame() {
        for text in ["%", "%4", "%zz", "%4g", "%g4", "a%", "a%2", "%%", "% 41", "%+1", "%-1"] {
            #expect(decoded(text) == Array(text.utf8), "\(text)")
        }
        #expect(decoded("%%41") == Array("%A".utf8))      // the first % is text, the second an escape
        #expect(decoded("%2541") == Array("%41".utf8))    // decoded once, not again
    }

    @Test func anEscapedNULIsLeftAsTextSoThatItEndsNothing() {
        #expect(decoded("/accounts/ID%00x") == Array("/accounts/ID%00x".utf8))
        #expect(decoded("%00%41") == Array("%00A".utf8))
    }

    @Test func decodingStopsAtTheTextsNUL() {
        var text: [UInt8] = Array("%41".utf8) + [0] + Array("%42".utf8) + [0]
        let count = text.withUnsafeMutableBufferPointer { QueryText.decode($0.baseAddress!) }
        #expect(count == 1)
        #expect(Array(text.prefix(2)) == [0x41, 0])
        #expect(Array(text[4...]) == Array("%42".utf8) + [0])  // past the NUL: untouched
    }
}
