import Testing
@testable import VirtualAuthenticator

@Suite struct DERTests {
    @Test func integersTakeTheFewestTwosComplementBytes() {
        #expect(DER.integer(0) == [0x02, 0x01, 0x00])
        #expect(DER.integer(127) == [0x02, 0x01, 0x7F])
        #expect(DER.integer(128) == [0x02, 0x02, 0x00, 0x80])
        #expect(DER.integer(-1) == [0x02, 0x01, 0xFF])
        #expect(DER.integer(-129) == [0x02, 0x02, 0xFF, 0x7F])
        #expect(DER.unsignedInteger([0x00, 0x00, 0x90]) == [0x02, 0x02, 0x00, 0x90])
        #expect(DER.enumerated(2) == [0x0A, 0x01, 0x02])
    }

    @Test func objectIdentifiersAndLongLengths() {
        // X.690 §8.19.5 example arc, and the FIDO AAGUID extension OID.
        #expect(DER.oid("1.3.6.1.4.1.45724.1.1.4") == [0x06, 0x0B, 0x2B, 0x06, 0x01, 0x04, 0x01, 0x82, 0xE5, 0x1C, 0x01, 0x01, 0x04])
        #expect(DER.oid("2.999.3") == [0x06, 0x03, 0x88, 0x37, 0x03])
        let long = DER.octetString([UInt8](repeating: 7, count: 300))
        #expect(Array(long.prefix(4)) == [0x04, 0x82, 0x01, 0x2C] && long.count == 304)
    }

    @Test func contextTagsAboveThirtyUseTheHighTagForm() {
        #expect(DER.explicit(1, DER.null) == [0xA1, 0x02, 0x05, 0x00])
        // KeyDescription's [709] EXPLICIT (attestationApplicationId): 0xBF 0x85 0x45.
        #expect(Array(DER.explicit(709, DER.null).prefix(3)) == [0xBF, 0x85, 0x45])
        #expect(DER.set([DER.integer(3), DER.integer(1)]) == [0x31, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x03])
    }
}
