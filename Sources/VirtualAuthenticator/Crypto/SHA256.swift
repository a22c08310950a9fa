import COpenSSL

/// SHA-256 (FIPS 180-4) through OpenSSL.
package enum SHA256 {
    /// The provider's SHA-256, fetched once: `EVP_sha256()` would look it up on every use. An
    /// `EVP_MD` never changes once fetched, so every thread may use it. Its absence (OpenSSL
    /// configured without a provider) is reported by ``CryptoAvailability/check()``, which the
    /// command line and `Keychain` run first; only a library caller that skips it can reach this stop.
    nonisolated(unsafe) static let algorithm: OpaquePointer = {
        guard let md = EVP_MD_fetch(nil, "SHA256", nil) else { fatalError("OpenSSL has no SHA256") }
        return md
    }()

    package static func hash(_ data: some Collection<UInt8>) -> [UInt8] {
        if let digest = data.withContiguousStorageIfAvailable({ hash($0) }) { return digest }
        return Array(data).withUnsafeBufferPointer { hash($0) }
    }

    static func hash(_ input: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 32) { digest, count in
            let ok = EVP_Digest(input.baseAddress, input.count, digest.baseAddress, nil, algorithm, nil)
            precondition(ok == 1, "EVP_Digest(SHA-256) failed")
            count = 32
        }
    }
}
