import COpenSSL

/// SHA-256 (FIPS 180-4) through OpenSSL.
public enum SHA256 {
    public static func hash(_ data: some Collection<UInt8>) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        let ok = Array(data).withUnsafeBufferPointer { input in
            EVP_Digest(input.baseAddress, input.count, &digest, nil, EVP_sha256(), nil)
        }
        precondition(ok == 1, "EVP_Digest(SHA-256) failed")
        return digest
    }
}
