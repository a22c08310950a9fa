import Foundation
import Synchronization
import Testing
@testable import VirtualAuthenticator

/// A key's pooled signing contexts and the shared key-generation contexts: reused and shared across
/// threads, they still make signatures OpenSSL accepts, and RS256 still makes the bytes the
/// `openssl` command makes.
@Suite struct SigningContextTests {
    @Test(arguments: COSEAlgorithm.allCases)
    func oneKeySignsFromManyThreadsAtOnce(_ algorithm: COSEAlgorithm) throws {
        let key = try PrivateKey.generate(algorithm)
        let spki = key.subjectPublicKeyInfo
        let threads = 8, rounds = algorithm == .rs256 ? 5 : 50
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for round in 0..<rounds {
                let message = Array("thread \(thread) round \(round)".utf8)
                let ok = (try? key.sign(message)).map { SignatureVerifier.verify(signature: $0, message: message, spki: spki) } ?? false
                if !ok { failures.withLock { $0 += 1 } }
            }
        }
        #expect(failures.withLock { $0 } == 0)
    }

    @Test(arguments: COSEAlgorithm.allCases)
    func keysGeneratedOnManyThreadsAtOnceAreDistinctAndSign(_ algorithm: COSEAlgorithm) throws {
        let count = algorithm == .rs256 ? 4 : 64
        let keys = Mutex([COSEKey]())
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: count) { _ in
            guard let key = try? PrivateKey.generate(algorithm), let signature = try? key.sign([1, 2, 3]),
                  SignatureVerifier.verify(signature: signature, message: [1, 2, 3], spki: key.subjectPublicKeyInfo) else {
                failures.withLock { $0 += 1 }
                return
            }
            keys.withLock { $0.append(key.publicKey) }
        }
        #expect(failures.withLock { $0 } == 0)
        let publicKeys = keys.withLock { $0 }
        #expect(publicKeys.count == count && Set(publicKeys.map { $0.cbor.encoded() }).count == count)
    }

    /// PKCS #1 v1.5 is deterministic: a reused context signs exactly as `openssl dgst -sha256 -sign`.
    @Test func rs256SignaturesAreTheOpenSSLCommandsBytes() throws {
        let scratch = try AttestationCertificateTests.Scratch()
        let key = try PrivateKey.generate(.rs256)
        var der = [UInt8](repeating: 0, count: key.privateKeyDERCount)
        let written = try der.withUnsafeMutableBytes { try key.writePrivateKeyDER(into: $0) }
        let keyPath = try scratch.write("key.der", Array(der.prefix(written)))
        for message in [Array("first".utf8), Array("second, from a reused context".utf8)] {
            let signature = try key.sign(message)
            let signaturePath = scratch.url.appendingPathComponent("signature.bin").path
            let result = try scratch.openssl(["dgst", "-sha256", "-keyform", "DER", "-sign", keyPath, "-out", signaturePath,
                                              try scratch.write("message.bin", message)])
            #expect(result.status == 0, "\(result.output)")
            #expect(Array(try Data(contentsOf: URL(fileURLWithPath: signaturePath))) == signature)
        }
    }
}
