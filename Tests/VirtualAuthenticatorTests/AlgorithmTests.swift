import Foundation
import Testing
@testable import VirtualAuthenticator

/// Every algorithm's keys: made, signed with, checked by OpenSSL through their SPKI, kept as DER
/// and read back, and their COSE_Key encoded as RFC 9053 / RFC 8230 say.
@Suite struct AlgorithmTests {
    @Test(arguments: COSEAlgorithm.allCases)
    func signaturesVerifyAndTamperingIsCaught(_ algorithm: COSEAlgorithm) throws {
        let key = try PrivateKey.generate(algorithm)
        #expect(key.algorithm == algorithm && key.publicKey.algorithm == algorithm)
        let message = Array("authenticatorData ‖ clientDataHash".utf8)
        let signature = try key.sign(message)
        let spki = key.subjectPublicKeyInfo
        #expect(SignatureVerifier.verify(signature: signature, message: message, spki: spki))
        var flipped = signature
        flipped[flipped.count / 2] ^= 0x10
        #expect(!SignatureVerifier.verify(signature: flipped, message: message, spki: spki))
        #expect(!SignatureVerifier.verify(signature: signature, message: message + [0], spki: spki))
        let other = try PrivateKey.generate(algorithm)
        #expect(!SignatureVerifier.verify(signature: signature, message: message, spki: other.subjectPublicKeyInfo))
        switch algorithm {
        case .edDSA: #expect(signature.count == 64)
        case .rs256: #expect(signature.count == 256)
        case .es256: #expect(signature.first == 0x30)  // DER Ecdsa-Sig-Value
        }
    }

    /// The `openssl` command, not this module's verifier, judges each algorithm's signatures.
    @Test(arguments: COSEAlgorithm.allCases)
    func theOpenSSLCommandAcceptsTheSignatures(_ algorithm: COSEAlgorithm) throws {
        let scratch = try AttestationCertificateTests.Scratch()
        let key = try PrivateKey.generate(algorithm)
        let message = Array("authenticatorData ‖ clientDataHash".utf8)
        let signature = try key.sign(message)
        let spki = try scratch.write("key.der", key.subjectPublicKeyInfo)
        let messagePath = try scratch.write("message.bin", message)
        func verifies(_ signature: [UInt8]) throws -> Bool {
            let signaturePath = try scratch.write("signature.bin", signature)
            let arguments = algorithm == .edDSA
                ? ["pkeyutl", "-verify", "-pubin", "-keyform", "DER", "-inkey", spki, "-rawin", "-in", messagePath, "-sigfile", signaturePath]
                : ["dgst", "-sha256", "-keyform", "DER", "-verify", spki, "-signature", signaturePath, messagePath]
            return try scratch.openssl(arguments).status == 0
        }
        #expect(try verifies(signature))
        var flipped = signature
        flipped[flipped.count - 1] ^= 0x01
        #expect(try !verifies(flipped))
    }

    @Test(arguments: COSEAlgorithm.allCases)
    func keysSurviveTheirDEREncoding(_ algorithm: COSEAlgorithm) throws {
        let key = try PrivateKey.generate(algorithm)
        var der = [UInt8](repeating: 0, count: key.privateKeyDERCount)
        let written = try der.withUnsafeMutableBytes { try key.writePrivateKeyDER(into: $0) }
        let loaded = try der.prefix(written).withUnsafeBytes { try PrivateKey.load(der: $0) }
        #expect(loaded.algorithm == algorithm && loaded.publicKey == key.publicKey)
        #expect(SignatureVerifier.verify(signature: try loaded.sign([1, 2, 3]), message: [1, 2, 3], spki: key.subjectPublicKeyInfo))
    }

    /// A generated P-256 key's DER is written without OpenSSL's encoder, and is byte for byte what
    /// `i2d_PrivateKey` writes for the same key (the vault seals these bytes, and secrets are
    /// derived from them): the key read back is written by OpenSSL, and must give the same bytes
    /// and the same derived secret.
    @Test func aGeneratedP256KeysDERIsWhatOpenSSLWritesForIt() throws {
        for _ in 0..<300 {
            let key = try PrivateKey.generate(.es256)
            var der = [UInt8](repeating: 0, count: key.privateKeyDERCount)
            let written = try der.withUnsafeMutableBytes { try key.writePrivateKeyDER(into: $0) }
            #expect(written == 121)
            let loaded = try der.prefix(written).withUnsafeBytes { try PrivateKey.load(der: $0) }
            var again = [UInt8](repeating: 0, count: loaded.privateKeyDERCount)
            let rewritten = try again.withUnsafeMutableBytes { try loaded.writePrivateKeyDER(into: $0) }
            #expect(Array(again.prefix(rewritten)) == Array(der.prefix(written)))
            #expect(try key.deriveSecret(info: "test") == loaded.deriveSecret(info: "test"))
        }
        let key = try PrivateKey.generate(.es256)
        var short = [UInt8](repeating: 0, count: 120)
        #expect(throws: OpenSSLFailure.self) { _ = try short.withUnsafeMutableBytes { try key.writePrivateKeyDER(into: $0) } }
    }

    /// A new key's DER is read without OpenSSL's decoders (P-256 and Ed25519); the same key in
    /// other layouts — PKCS #8, a compressed point, no curve parameters — goes through them. Every
    /// reading is the same key pair.
    @Test(arguments: [COSEAlgorithm.es256, .edDSA])
    func keysInOtherLayoutsAreTheSameKey(_ algorithm: COSEAlgorithm) throws {
        let key = try PrivateKey.generate(algorithm)
        var der = [UInt8](repeating: 0, count: key.privateKeyDERCount)
        let written = try der.withUnsafeMutableBytes { try key.writePrivateKeyDER(into: $0) }
        #expect(written == (algorithm == .es256 ? 121 : 48))
        let scratch = try AttestationCertificateTests.Scratch()
        let path = try scratch.write("key.der", Array(der.prefix(written)))
        // (An Ed25519 key is written as PKCS #8 already: it has no other DER layout.)
        let layouts = algorithm == .edDSA ? [] : [["pkcs8", "-topk8", "-nocrypt"], ["ec", "-conv_form", "compressed"],
                                                   ["ec", "-no_public"], ["ec", "-param_enc", "explicit"]]
        let again = try der.prefix(written).withUnsafeBytes { try PrivateKey.load(der: $0) }
        #expect(again.algorithm == algorithm && again.publicKey == key.publicKey)
        for (index, layout) in layouts.enumerated() {
            let out = scratch.url.appendingPathComponent("other-\(index).der").path
            #expect(try scratch.openssl(layout + ["-inform", "DER", "-outform", "DER", "-in", path, "-out", out]).status == 0)
            let other = [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
            #expect(other != Array(der.prefix(written)), "\(layout)")
            guard let loaded = try? other.withUnsafeBytes({ try PrivateKey.load(der: $0) }) else {
                // Explicit curve parameters are refused as not P-256 by name; the rest must load.
                #expect(layout.contains("explicit"), "\(layout)")
                continue
            }
            #expect(loaded.algorithm == algorithm && loaded.publicKey == key.publicKey, "\(layout)")
            #expect(SignatureVerifier.verify(signature: try loaded.sign([4, 5]), message: [4, 5], spki: key.subjectPublicKeyInfo))
        }
        // A damaged key in the written layout is refused, not read as another key.
        if algorithm == .es256 {
            var bad = Array(der.prefix(written))
            bad[60] ^= 0xFF  // the public point is no longer on the curve
            #expect(throws: OpenSSLFailure.self) { try bad.withUnsafeBytes { try PrivateKey.load(der: $0) } }
        }
    }

    @Test(arguments: COSEAlgorithm.allCases)
    func coseKeysRoundTripInCanonicalOrder(_ algorithm: COSEAlgorithm) throws {
        let pair = try PrivateKey.generate(algorithm)
        let key = pair.publicKey
        let encoded = key.cbor.encoded()
        #expect(COSEKey(cbor: try CBORValue.decode(encoded)) == key)
        #expect(COSEKey(storedForm: key.storedForm, algorithm: algorithm) == key)
        // CTAP2 canonical: kty (1) first, then alg (3), then the negative labels -1, -2(, -3).
        guard case .map(let pairs) = key.cbor else { Issue.record("not a map"); return }
        #expect(pairs.map(\.0.intValue) == (algorithm == .es256 ? [1, 3, -1, -2, -3] : [1, 3, -1, -2]))
        switch key {
        case .ec2(let x, let y): #expect(x.count == 32 && y.count == 32 && encoded.starts(with: [0xA5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01]))
        case .okp(let x): #expect(x.count == 32 && encoded.starts(with: [0xA4, 0x01, 0x01, 0x03, 0x27, 0x20, 0x06]))
        case .rsa(let n, let e):
            #expect(n.count == 256 && n[0] & 0x80 != 0 && e == [0x01, 0x00, 0x01])
            #expect(encoded.starts(with: [0xA4, 0x01, 0x03, 0x03, 0x39, 0x01, 0x00, 0x20, 0x59, 0x01, 0x00]))
        }
        // The SPKI built from the COSE_Key is the one the openssl command writes for the same key.
        let scratch = try AttestationCertificateTests.Scratch()
        var der = [UInt8](repeating: 0, count: pair.privateKeyDERCount)
        let written = try der.withUnsafeMutableBytes { try pair.writePrivateKeyDER(into: $0) }
        let keyPath = try scratch.write("key.der", Array(der.prefix(written)))
        let spkiPath = scratch.url.appendingPathComponent("spki.der").path
        #expect(try scratch.openssl(["pkey", "-inform", "DER", "-in", keyPath, "-pubout", "-outform", "DER", "-out", spkiPath]).status == 0)
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: spkiPath))) == key.subjectPublicKeyInfo)
    }

    @Test func aKeyOfTheWrongAlgorithmOrShapeIsNotACOSEKey() {
        #expect(COSEKey(cbor: .map([(.int(1), .int(1)), (.int(3), .int(-7)), (.int(-1), .int(6)), (.int(-2), .bytes([UInt8](repeating: 1, count: 32)))])) == nil)
        #expect(COSEKey(cbor: .map([(.int(1), .int(3)), (.int(3), .int(-257)), (.int(-1), .bytes([0, 1])), (.int(-2), .bytes([1, 0, 1]))])) == nil)
        #expect(COSEKey(storedForm: [0x04] + [UInt8](repeating: 1, count: 64), algorithm: .edDSA) == nil)
    }

    @Test func theRPsOrderChoosesUnlessTheProfilePrefersOne() {
        #expect(AuthenticatorProfile.authctl.algorithm(for: [-8, -7, -257]) == .edDSA)
        #expect(AuthenticatorProfile.authctl.algorithm(for: [-36, -257, -7]) == .rs256)
        #expect(AuthenticatorProfile.iCloudKeychain.algorithm(for: [-8, -257]) == nil)
        #expect(AuthenticatorProfile.iCloudKeychain.algorithm(for: [-8, -7]) == .es256)
        #expect(AuthenticatorProfile.windowsHello.algorithm(for: [-7, -257]) == .rs256)
        #expect(AuthenticatorProfile.windowsHello.algorithm(for: [-7]) == .es256)
        #expect(COSEAlgorithm(name: "EdDSA") == .edDSA && COSEAlgorithm(name: "-257") == .rs256 && COSEAlgorithm(name: "ps256") == nil)
    }

    @Test func aagUIDsReadAndPrintInTheirUsualForm() {
        let text = "fbfc3007-154e-4ecc-8c0b-6e020557d7bd"
        let bytes = AuthenticatorProfile.parseAAGUID(text)
        #expect(bytes?.count == 16 && bytes?.first == 0xFB)
        #expect(AuthenticatorProfile.formatAAGUID(bytes ?? []) == text)
        #expect(AuthenticatorProfile.parseAAGUID("fbfc3007154e4ecc8c0b6e020557d7bd") == nil)
        #expect(AuthenticatorProfile.parseAAGUID("zbfc3007-154e-4ecc-8c0b-6e020557d7bd") == nil)
        #expect(Set(AuthenticatorProfile.all.map(\.name)).count == AuthenticatorProfile.all.count)
    }

    /// The public key is read from the encoded point when it is uncompressed and by coordinates
    /// when a key from DER keeps it compressed: the same COSE_Key either way.
    @Test func aCompressedPointReadsAsTheSamePublicKey() throws {
        let scratch = try AttestationCertificateTests.Scratch()
        let key = try PrivateKey.generate(.es256)
        var der = [UInt8](repeating: 0, count: key.privateKeyDERCount)
        let written = try der.withUnsafeMutableBytes { try key.writePrivateKeyDER(into: $0) }
        let keyPath = try scratch.write("key.der", Array(der.prefix(written)))
        let compressedPath = scratch.url.appendingPathComponent("compressed.der").path
        let result = try scratch.openssl(["ec", "-inform", "DER", "-in", keyPath, "-conv_form", "compressed", "-outform", "DER", "-out", compressedPath])
        #expect(result.status == 0, "\(result.output)")
        let compressed = Array(try Data(contentsOf: URL(fileURLWithPath: compressedPath)))
        #expect(compressed.count < written)
        let loaded = try compressed.withUnsafeBytes { try PrivateKey.load(der: $0) }
        #expect(loaded.publicKey == key.publicKey)
        #expect(loaded.subjectPublicKeyInfo == key.subjectPublicKeyInfo)
    }
}
