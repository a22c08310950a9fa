import CSodium

/// A salted Argon2id verifier for a short secret (the simulated biometric PIN), in libsodium's
/// `crypto_pwhash_str` encoding (`$argon2id$v=19$m=…,t=…,p=1$salt$hash`). It lets a PIN be checked
/// without storing it; it is kept only inside the sealed vault.
public enum PINVerifier {
    public static func make(_ pin: SecureBytes, kdf: KDFLevel) throws(VaultError) -> [UInt8] {
        Sodium.initialize()
        var out = [CChar](repeating: 0, count: Int(crypto_pwhash_STRBYTES))
        let rc = pin.withUnsafeBytes { p in
            crypto_pwhash_str(&out, p.baseAddress!.assumingMemoryBound(to: CChar.self), UInt64(p.count),
                              kdf.opslimit, Int(kdf.memlimit))
        }
        guard rc == 0 else { throw VaultError(.io, "Argon2id could not allocate memory for the PIN verifier") }
        return out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    }

    public static func matches(_ pin: SecureBytes, verifier: [UInt8]) -> Bool {
        Sodium.initialize()
        let terminated = verifier.map { CChar(bitPattern: $0) } + [0]
        return pin.withUnsafeBytes { p in
            crypto_pwhash_str_verify(terminated, p.baseAddress!.assumingMemoryBound(to: CChar.self), UInt64(p.count)) == 0
        }
    }
}
