import CSodium

/// Argon2id cost levels (libsodium's named limits). `min` is libsodium's minimum: insecure, for
/// test fixtures only.
public enum KDFLevel: String, CaseIterable, Sendable {
    case min, interactive, moderate, sensitive

    /// The level with exactly these limits, if any.
    package init?(opslimit: UInt64, memlimit: UInt64) {
        guard let level = Self.allCases.first(where: { $0.opslimit == opslimit && $0.memlimit == memlimit }) else { return nil }
        self = level
    }

    package var opslimit: UInt64 {
        switch self {
        case .min: UInt64(crypto_pwhash_opslimit_min())
        case .interactive: UInt64(crypto_pwhash_opslimit_interactive())
        case .moderate: UInt64(crypto_pwhash_opslimit_moderate())
        case .sensitive: UInt64(crypto_pwhash_opslimit_sensitive())
        }
    }

    package var memlimit: UInt64 {
        switch self {
        case .min: UInt64(crypto_pwhash_memlimit_min())
        case .interactive: UInt64(crypto_pwhash_memlimit_interactive())
        case .moderate: UInt64(crypto_pwhash_memlimit_moderate())
        case .sensitive: UInt64(crypto_pwhash_memlimit_sensitive())
        }
    }
}
