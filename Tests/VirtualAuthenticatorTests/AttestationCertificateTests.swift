import Foundation
import Testing
import TestSupport
@testable import VirtualAuthenticator

/// Statements are checked with the `openssl` command, not with the code that built them: chains
/// with `openssl verify`, signatures with `openssl dgst -verify` against the leaf's own key.
@Suite struct AttestationCertificateTests {
    static let notBefore: Int64 = 1_700_000_000  // 2023-11-14T22:13:20Z
    static let validity = CertificateValidity.unbounded(from: notBefore)
    static let aaguid: [UInt8] = Array(0x10...0x1F)
    static let ca: AttestationCA = try! AttestationCA.generate(
        rootSubject: DistinguishedName([("C", "SE"), ("O", "authctl"), ("CN", "authctl Attestation Root")]),
        intermediateSubject: DistinguishedName([("C", "SE"), ("O", "authctl"), ("CN", "authctl Attestation CA 1")]),
        validity: validity)
    static let subject = DistinguishedName.authenticatorAttestation(country: "SE", organization: "authctl", commonName: "authctl Batch 1")

    /// A fresh ES256 credential and the authenticatorData that carries it.
    struct Credential {
        let key = try! PrivateKey.generate()
        let id: [UInt8] = Array(0..<32)
        let clientDataHash = SHA256.hash(Array(#"{"type":"webauthn.create"}"#.utf8))

        func authenticatorData(aaguid: [UInt8]) -> [UInt8] {
            AuthenticatorData(rpId: "example.com", flags: [.userPresent], signCount: 0,
                              attestedCredentialData: AttestedCredentialData(
                                  aaguid: aaguid, credentialId: id, publicKey: key.publicKey)).bytes
        }

        func input(aaguid: [UInt8] = AttestationCertificateTests.aaguid, subject: DistinguishedName = AttestationCertificateTests.subject)
            -> AttestationStatementInput {
            let key = key
            return AttestationStatementInput(
                authenticatorData: authenticatorData(aaguid: aaguid), clientDataHash: clientDataHash,
                credentialAlgorithm: COSEAlgorithm.es256.rawValue, credentialPublicKey: key.subjectPublicKeyInfo,
                signWithCredentialKey: { message throws(OpenSSLFailure) in try key.sign(message) },
                aaguid: aaguid, ca: AttestationCertificateTests.ca, certificateSubject: subject,
                certificateValidity: AttestationCertificateTests.validity)
        }
    }

    // MARK: - The openssl command

    final class Scratch {
        let directory: TemporaryDirectory
        var url: URL { URL(fileURLWithPath: directory.path) }
        init() throws { directory = try TemporaryDirectory("attestation") }

        func write(_ name: String, _ bytes: [UInt8]) throws -> String {
            let path = url.appendingPathComponent(name).path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            return path
        }

        /// Runs `openssl` with `arguments`; the exit status and what it printed (stdout and stderr).
        func openssl(_ arguments: [String]) throws -> (status: Int32, output: String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["openssl"] + arguments
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = pipe
            try process.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: data, as: UTF8.self))
        }

        /// `openssl verify` of `chain[0]` against `root` as the only trust anchor, `chain[1...]` untrusted.
        func chainVerifies(_ chain: [[UInt8]], root: [UInt8]) throws -> Bool {
            let rootPath = try write("root.pem", Array(pem(root).utf8))
            var arguments = ["verify", "-x509_strict", "-CAfile", rootPath]
            if chain.count > 1 {
                let untrusted = try chain.dropFirst().map { try pem($0) }.joined()
                arguments += ["-untrusted", try write("untrusted.pem", Array(untrusted.utf8))]
            }
            arguments.append(try write("leaf.pem", Array(try pem(chain[0]).utf8)))
            return try openssl(arguments).status == 0
        }

        /// PEM by the openssl command, from DER.
        func pem(_ der: [UInt8]) throws -> String {
            let path = try write("cert-\(UUID().uuidString).der", der)
            let result = try openssl(["x509", "-inform", "DER", "-in", path])
            try #require(result.status == 0, "openssl x509 could not read the certificate: \(result.output)")
            return result.output
        }

        /// `openssl dgst -sha256 -verify` with the public key of `certificate`.
        func signatureVerifies(_ signature: [UInt8], message: [UInt8], certificate: [UInt8]) throws -> Bool {
            let cert = try write("signer.der", certificate)
            let key = try openssl(["x509", "-inform", "DER", "-in", cert, "-noout", "-pubkey"])
            try #require(key.status == 0)
            let keyPath = try write("signer-key.pem", Array(key.output.utf8))
            return try openssl(["dgst", "-sha256", "-verify", keyPath, "-signature", write("sig.bin", signature),
                                write("message.bin", message)]).status == 0
        }

        func text(_ certificate: [UInt8]) throws -> String {
            try openssl(["x509", "-inform", "DER", "-in", write("text.der", certificate), "-noout", "-text",
                         "-nameopt", "RFC2253"]).output
        }
    }

    static func x5c(_ statement: CBORValue) throws -> [[UInt8]] {
        guard case .array(let items)? = statement[.text("x5c")] else { throw AttestationStatementError("no x5c") }
        return try items.map { try #require($0.bytesValue) }
    }

    static func flipped(_ bytes: [UInt8], at index: Int) -> [UInt8] {
        var out = bytes
        out[index] ^= 0x01
        return out
    }

    // MARK: - packed

    @Test func packedChainsToTheRootAndItsSignatureVerifiesWithTheLeafKey() throws {
        let scratch = try Scratch()
        let credential = Credential()
        let input = credential.input()
        let statement = try PackedAttestationStatement.build(input)
        let x5c = try Self.x5c(statement)
        #expect(x5c.count == 2 && x5c[1] == Self.ca.intermediate.der)
        #expect(statement[.text("alg")]?.intValue == -7)
        #expect(try scratch.chainVerifies(x5c, root: Self.ca.rootDER))
        let signature = try #require(statement[.text("sig")]?.bytesValue)
        #expect(try scratch.signatureVerifies(signature, message: input.authenticatorData + input.clientDataHash, certificate: x5c[0]))

        let leaf = try X509Certificate(der: x5c[0])
        let aaguidExtension = try #require(leaf.extension(CertificateExtension.fidoAAGUIDOID))
        #expect(!aaguidExtension.critical && aaguidExtension.value == [0x04, 0x10] + Self.aaguid)
        #expect(Array(input.authenticatorData[37..<53]) == Self.aaguid)
        let text = try scratch.text(x5c[0])
        #expect(text.contains("Version: 3 (0x2)"))
        #expect(text.contains("Subject: CN=authctl Batch 1,OU=Authenticator Attestation,O=authctl,C=SE"))
        #expect(text.contains("CA:FALSE"))

        // Tampering: another clientDataHash, a flipped byte inside the leaf's TBSCertificate.
        #expect(try !scratch.signatureVerifies(signature, message: input.authenticatorData + SHA256.hash([1]), certificate: x5c[0]))
        #expect(try !scratch.chainVerifies([Self.flipped(x5c[0], at: 20)] + x5c.dropFirst(), root: Self.ca.rootDER))
        #expect(try !scratch.chainVerifies([x5c[0], Self.flipped(x5c[1], at: 20)], root: Self.ca.rootDER))
    }

    @Test func packedRefusesAnAAGUIDThatDiffersFromAuthenticatorData() throws {
        var input = Credential().input()
        input.aaguid = [UInt8](repeating: 0xAA, count: 16)
        #expect(throws: AttestationStatementError.self) { try PackedAttestationStatement.build(input) }
    }

    // MARK: - fido-u2f

    @Test func fidoU2FHasOneCertificateSignedByTheRootAndSignsTheU2FMessage() throws {
        let scratch = try Scratch()
        let credential = Credential()
        let input = credential.input(aaguid: [UInt8](repeating: 0, count: 16))
        let statement = try FIDOU2FAttestationStatement.build(input)
        let x5c = try Self.x5c(statement)
        #expect(x5c.count == 1)
        #expect(statement[.text("alg")] == nil)
        #expect(try scratch.chainVerifies(x5c, root: Self.ca.rootDER))
        let signature = try #require(statement[.text("sig")]?.bytesValue)
        let message = [0x00] + SHA256.hash(Array("example.com".utf8)) + credential.clientDataHash + credential.id + credential.key.publicKey.storedForm
        #expect(try scratch.signatureVerifies(signature, message: message, certificate: x5c[0]))
        #expect(try !scratch.signatureVerifies(
            signature, message: [0x00] + SHA256.hash(Array("example.com".utf8)) + SHA256.hash([1]) + credential.id + credential.key.publicKey.storedForm,
            certificate: x5c[0]))
        #expect(try scratch.text(x5c[0]).contains("Public-Key: (256 bit)"))
        #expect(try !scratch.chainVerifies([Self.flipped(x5c[0], at: 20)], root: Self.ca.rootDER))

        var rs256 = input
        rs256.credentialAlgorithm = -257
        #expect(throws: AttestationStatementError.self) { try FIDOU2FAttestationStatement.build(rs256) }
    }

    // MARK: - apple

    @Test func appleCredentialCertificateCarriesTheCredentialKeyAndTheNonce() throws {
        let scratch = try Scratch()
        let credential = Credential()
        let input = credential.input(subject: DistinguishedName([("CN", "credential"), ("O", "authctl")]))
        let statement = try AppleAnonymousAttestationStatement.build(input)
        #expect(statement[.text("alg")] == nil && statement[.text("sig")] == nil)
        let x5c = try Self.x5c(statement)
        #expect(x5c.count == 2)
        #expect(try scratch.chainVerifies(x5c, root: Self.ca.rootDER))
        let leaf = try X509Certificate(der: x5c[0])
        #expect(leaf.subjectPublicKeyInfo == credential.key.subjectPublicKeyInfo)
        let nonce = SHA256.hash(input.authenticatorData + input.clientDataHash)
        let nonceExtension = try #require(leaf.extension(AppleAnonymousAttestationStatement.nonceExtensionOID))
        #expect(nonceExtension.value == [0x30, 0x24, 0xA1, 0x22, 0x04, 0x20] + nonce)
        #expect(Array(nonceExtension.value.dropFirst(6)) != SHA256.hash(input.authenticatorData + SHA256.hash([1])))
        #expect(try !scratch.chainVerifies([Self.flipped(x5c[0], at: 20), x5c[1]], root: Self.ca.rootDER))
    }

    // MARK: - android-key

    @Test func androidKeyCertificateDescribesTheCredentialKeyWithTheChallenge() throws {
        let scratch = try Scratch()
        let credential = Credential()
        let input = credential.input(subject: DistinguishedName([("CN", "Android Keystore Key")]))
        let statement = try AndroidKeyAttestationStatement.build(input)
        #expect(statement[.text("alg")]?.intValue == -7)
        let x5c = try Self.x5c(statement)
        #expect(x5c.count == 3 && x5c[2] == Self.ca.rootDER)
        #expect(try scratch.chainVerifies(Array(x5c.dropLast()), root: Self.ca.rootDER))
        let signature = try #require(statement[.text("sig")]?.bytesValue)
        #expect(try scratch.signatureVerifies(signature, message: input.authenticatorData + input.clientDataHash, certificate: x5c[0]))
        #expect(try !scratch.signatureVerifies(signature, message: input.authenticatorData + SHA256.hash([1]), certificate: x5c[0]))
        let leaf = try X509Certificate(der: x5c[0])
        #expect(leaf.subjectPublicKeyInfo == credential.key.subjectPublicKeyInfo)

        // The KeyDescription, read back by `openssl asn1parse`.
        let description = try #require(leaf.extension(KeyDescription.extensionOID))
        #expect(!description.critical)
        let parsed = try scratch.openssl(["asn1parse", "-inform", "DER", "-in", scratch.write("kd.der", description.value)])
        #expect(parsed.status == 0)
        let lines = parsed.output.split(separator: "\n").map(String.init)
        let challengeHex = input.clientDataHash.map { String(format: "%02X", $0) }.joined()
        // attestationVersion, attestationSecurityLevel, keymasterVersion, keymasterSecurityLevel,
        // attestationChallenge, uniqueId (empty), then the two lists.
        #expect(lines.count > 7)
        #expect(lines[1].contains("INTEGER") && lines[1].hasSuffix(":03"))
        #expect(lines[2].contains("ENUMERATED") && lines[2].hasSuffix(":01"))
        #expect(lines[3].contains("INTEGER") && lines[3].hasSuffix(":04"))
        #expect(lines[5].contains("OCTET STRING") && lines[5].hasSuffix(":" + challengeHex))
        #expect(lines[6].contains("OCTET STRING") && lines[6].contains("l=   0"))
        // teeEnforced: purpose [1] {2}, algorithm [2] 3 (EC), ..., origin [702] 0; no [600].
        let tee = KeyDescription.AuthorizationList.generatedSigningKey(coseAlgorithm: -7).der
        #expect(description.value.suffix(tee.count) == tee[...])
        #expect(tee.starts(with: [0x30, UInt8(tee.count - 2), 0xA1, 0x05, 0x31, 0x03, 0x02, 0x01, 0x02]))
        #expect(tee.suffix(7) == [0xBF, 0x85, 0x3E, 0x03, 0x02, 0x01, 0x00])
        #expect(!description.value.contains(subsequence: [0xBF, 0x84, 0x58]))
    }

    // MARK: - The CA and the builder

    @Test func aSerializedCAComesBackExactlyAndIssuesUnderTheSameRoot() throws {
        let scratch = try Scratch()
        let bytes = try Self.ca.serialized()
        let restored = try AttestationCA(serialized: bytes)
        #expect(try restored.serialized() == bytes)
        #expect(restored.rootDER == Self.ca.rootDER && restored.rootPEM == Self.ca.rootPEM)
        #expect(restored.attestationKey.subjectPublicKeyInfo == Self.ca.attestationKey.subjectPublicKeyInfo)
        let leaf = try restored.issueAttestationCertificate(subject: Self.subject, aaguid: Self.aaguid, validity: Self.validity)
        #expect(try scratch.chainVerifies([leaf.der, restored.intermediate.der], root: Self.ca.rootDER))
        let direct = try restored.issueCertificate(subject: Self.subject, subjectPublicKeyInfo: PrivateKey.generate().subjectPublicKeyInfo,
                                                   validity: Self.validity, issuer: .root)
        #expect(try scratch.chainVerifies([direct.der], root: Self.ca.rootDER))

        #expect(throws: AttestationCA.LoadError.self) { try AttestationCA(serialized: Array(bytes.dropLast())) }
        #expect(Self.ca.rootPEM.hasPrefix("-----BEGIN CERTIFICATE-----\n"))
        let text = try scratch.text(Self.ca.rootDER)
        #expect(text.contains("CA:TRUE") && text.contains("Certificate Sign, CRL Sign"))
        #expect(try scratch.text(Self.ca.intermediate.der).contains("CA:TRUE, pathlen:0"))
    }

    @Test func validityUsesUTCTimeBefore2050AndGeneralizedTimeAfter() throws {
        let der = Self.ca.rootDER
        #expect(der.contains(subsequence: [0x17, 0x0D] + Array("231114221320Z".utf8)))
        #expect(der.contains(subsequence: [0x18, 0x0F] + Array("99991231235959Z".utf8)))
        let scratch = try Scratch()
        let dates = try scratch.openssl(["x509", "-inform", "DER", "-in", scratch.write("root.der", der), "-noout", "-dates"])
        #expect(dates.output.contains("notAfter=Dec 31 23:59:59 9999 GMT"))
        #expect(CertificateBuilder.year(ofEpochSeconds: CertificateValidity.noWellDefinedExpiration) == 9999)
        #expect(CertificateBuilder.year(ofEpochSeconds: 2_524_608_000) == 2050)
        #expect(CertificateBuilder.year(ofEpochSeconds: 2_524_607_999) == 2049)
    }

    @Test func aCertificateMayHaveAnEmptySubjectAndAnyExtension() throws {
        let scratch = try Scratch()
        let key = try PrivateKey.generate()
        // As a TPM attestation identity key certificate: empty subject, a critical subjectAltName
        // (a directoryName with tcg-at-tpmManufacturer), extKeyUsage tcg-kp-AIKCertificate.
        let directoryName = DER.sequence([DER.set([DER.sequence([DER.oid("2.23.133.2.1"), DER.utf8String("id:FFFFF1D0")])])])
        let altName = CertificateExtension(oid: "2.5.29.17", critical: true, value: DER.sequence([DER.explicit(4, directoryName)]))
        let extendedKeyUsage = CertificateExtension(oid: "2.5.29.37", critical: false, value: DER.sequence([DER.oid("2.23.133.8.3")]))
        let leaf = try Self.ca.issueCertificate(subject: .empty, subjectPublicKeyInfo: key.subjectPublicKeyInfo,
                                                extensions: [altName, extendedKeyUsage, .keyUsage([.digitalSignature, .nonRepudiation])],
                                                validity: Self.validity)
        #expect(leaf.subjectNameDER == [0x30, 0x00])
        #expect(leaf.extension("2.5.29.17") == altName)
        #expect(leaf.extension("2.5.29.37") == extendedKeyUsage)
        #expect(leaf.extension(CertificateExtension.keyUsageOID)?.value == [0x03, 0x02, 0x06, 0xC0])
        #expect(try scratch.text(leaf.der).contains("Subject: \n"))
        #expect(try scratch.chainVerifies([leaf.der, Self.ca.intermediate.der], root: Self.ca.rootDER))
    }

    @Test func namedBitStringsDropTrailingZeroBits() {
        #expect(DER.namedBits([0]) == [0x03, 0x02, 0x07, 0x80])
        #expect(DER.namedBits([5, 6]) == [0x03, 0x02, 0x01, 0x06])
        #expect(DER.namedBits([]) == [0x03, 0x01, 0x00])
        #expect(DER.namedBits([8]) == [0x03, 0x03, 0x07, 0x00, 0x80])
    }
}

private extension Array where Element == UInt8 {
    func contains(subsequence: [UInt8]) -> Bool {
        guard subsequence.count <= count else { return false }
        return (0...(count - subsequence.count)).contains { Array(self[$0..<$0 + subsequence.count]) == subsequence }
    }
}
