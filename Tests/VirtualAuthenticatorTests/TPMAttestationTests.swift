import Foundation
import Testing
@testable import VirtualAuthenticator

@Suite struct TPMAttestationTests {
    static func hex(_ text: String) -> [UInt8] {
        let digits = Array(text.filter { !$0.isWhitespace })
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
    }

    static let policy = hex("9dffcbf36c383ae699fb9868dc6dcb89d7153884be2803922c124158bfad22ae")
    static let x = Array(UInt8(0x01)...UInt8(0x20))
    static let y = Array(UInt8(0x41)...UInt8(0x60))
    static let eccPubArea = TPMTPublic(key: .ecc(x: x, y: y))

    @Test func rsaPublicAreaIsAWindowsHelloKey() {
        let modulus = [0xC5] + [UInt8](repeating: 0xAB, count: 254) + [0x01]
        let bytes = TPMTPublic(key: .rsa(modulus: modulus, exponent: 65537)).encoded()
        #expect(bytes.count == 310)
        #expect(Array(bytes[0..<2]) == [0x00, 0x01])  // TPM_ALG_RSA
        #expect(Array(bytes[2..<4]) == [0x00, 0x0B])  // nameAlg TPM_ALG_SHA256
        #expect(Array(bytes[4..<8]) == [0x00, 0x06, 0x04, 0x72])  // sign|decrypt|noDA|userWithAuth|sDO|fixedParent|fixedTPM
        #expect(Array(bytes[8..<10]) == [0x00, 0x20] && Array(bytes[10..<42]) == Self.policy)
        #expect(Array(bytes[42..<44]) == [0x00, 0x10])  // symmetric TPM_ALG_NULL
        #expect(Array(bytes[44..<46]) == [0x00, 0x10])  // scheme TPM_ALG_NULL
        #expect(Array(bytes[46..<48]) == [0x08, 0x00])  // keyBits 2048
        #expect(Array(bytes[48..<52]) == [0, 0, 0, 0])  // exponent: 0 is 65537
        #expect(Array(bytes[52..<54]) == [0x01, 0x00] && Array(bytes[54...]) == modulus)

        let other = TPMTPublic(key: .rsa(modulus: modulus, exponent: 3), authPolicy: []).encoded()
        #expect(Array(other[8..<10]) == [0, 0])
        #expect(Array(other[16..<20]) == [0, 0, 0, 3])
    }

    @Test func eccPublicAreaAndItsName() {
        let expected = Self.hex("0023 000b 00060472 0020") + Self.policy + Self.hex("0010 0010 0003 0010")
            + [0x00, 0x20] + Self.x + [0x00, 0x20] + Self.y
        #expect(Self.eccPubArea.encoded() == expected)
        #expect(Self.eccPubArea.name()
            == Self.hex("000b 463178c80d7beadbd60ca1b87010aed4c666dd0f7f145487a885815a53bb6741"))
    }

    @Test func certifyAttestationFieldsAtTheirOffsets() {
        let authenticatorData = [UInt8](repeating: 0x5A, count: 37 + 16 + 2 + 16 + 77)
        let clientDataHash = [UInt8](repeating: 0xC3, count: 32)
        let extraData = TPMSAttest.extraData(alg: -257, authenticatorData: authenticatorData, clientDataHash: clientDataHash)!
        #expect(extraData == SHA256.hash(authenticatorData + clientDataHash))
        #expect(TPMSAttest.extraData(alg: -7, authenticatorData: authenticatorData, clientDataHash: clientDataHash) == extraData)
        #expect(TPMSAttest.extraData(alg: -65535, authenticatorData: [], clientDataHash: []) == nil)

        let signer = [0x00, 0x0B] + [UInt8](repeating: 0x11, count: 32)
        let bytes = TPMSAttest(
            certifying: Self.eccPubArea, parentQualifiedName: TPMSAttest.ownerHierarchy, qualifiedSigner: signer,
            extraData: extraData,
            clockInfo: TPMSClockInfo(clock: 0x0102_0304_0506_0708, resetCount: 9, restartCount: 10, safe: true),
            firmwareVersion: 0x0001_0002_0003_0004
        ).encoded()
        #expect(bytes.count == 173)
        #expect(Array(bytes[0..<4]) == [0xFF, 0x54, 0x43, 0x47])  // TPM_GENERATED_VALUE
        #expect(Array(bytes[4..<6]) == [0x80, 0x17])  // TPM_ST_ATTEST_CERTIFY
        #expect(Array(bytes[6..<8]) == [0x00, 0x22] && Array(bytes[8..<42]) == signer)
        #expect(Array(bytes[42..<44]) == [0x00, 0x20] && Array(bytes[44..<76]) == extraData)
        #expect(Array(bytes[76..<93]) == Self.hex("0102030405060708 00000009 0000000a 01"))
        #expect(Array(bytes[93..<101]) == Self.hex("0001000200030004"))
        #expect(Array(bytes[101..<103]) == [0x00, 0x22])
        #expect(Array(bytes[103..<137]) == [0x00, 0x0B] + SHA256.hash(Self.eccPubArea.encoded()))
        #expect(Array(bytes[137..<139]) == [0x00, 0x22])
        #expect(Array(bytes[139..<173])
            == Self.hex("000b 7e1b737f787c947555211692c767e4d2a4d6c751f3ce8c69f8c726a9583261b6"))
    }

    @Test func statementHoldsTheSixMembers() throws {
        let statement = TPMAttestation.statement(
            alg: -257, x5c: [[0x30, 0x00], [0x30, 0x01]], sig: [1, 2], certInfo: [3], pubArea: [4])
        #expect(statement[.text("ver")] == .text("2.0"))
        #expect(statement[.text("alg")]?.intValue == -257)
        #expect(statement[.text("x5c")] == .array([.bytes([0x30, 0x00]), .bytes([0x30, 0x01])]))
        #expect(statement[.text("sig")] == .bytes([1, 2]))
        #expect(statement[.text("certInfo")] == .bytes([3]))
        #expect(statement[.text("pubArea")] == .bytes([4]))
        let decoded = try CBORValue.decode(statement.encoded())
        #expect(decoded == statement)
    }

    @Test func aikExtensionsAsOpenSSLReadsThem() throws {
        let aaguid = Array(UInt8(0xA0)...UInt8(0xAF))
        let extensions = TPMAIKCertificate.extensions(device: .microsoft, aaguid: aaguid)
        #expect(extensions.map(\.oid) == ["2.5.29.17", "2.5.29.37", "2.5.29.19", "1.3.6.1.4.1.45724.1.1.4"])
        #expect(extensions.map(\.critical) == [true, false, true, false])
        #expect(extensions[2].value == [0x30, 0x00])
        #expect(extensions[3].value == [0x04, 0x10] + aaguid)
        #expect(TPMAIKCertificate.subject == [0x30, 0x00])

        let san = try Self.asn1parse(extensions[0].value)
        #expect(san.contains("cont [ 4 ]"))
        #expect(san.contains(":2.23.133.2.1") && san.contains(":id:4D534654"))
        #expect(san.contains(":2.23.133.2.2") && san.contains(":MSFT"))
        #expect(san.contains(":2.23.133.2.3") && san.contains(":id:0002"))
        #expect(san.components(separatedBy: "UTF8STRING").count == 4)
        #expect(san.components(separatedBy: "cons: SET").count == 2)  // one RDN of three

        let eku = try Self.asn1parse(extensions[1].value)
        #expect(eku.contains("OBJECT            :2.23.133.8.3"))
    }

    /// `openssl asn1parse`'s listing of `der`.
    static func asn1parse(_ der: [UInt8]) throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tpm-\(UUID().uuidString).der")
        try Data(der).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl", "asn1parse", "-inform", "DER", "-in", file.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return String(decoding: data, as: UTF8.self)
    }
}
