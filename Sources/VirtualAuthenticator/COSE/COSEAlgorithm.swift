/// The COSE algorithms (IANA "COSE Algorithms" registry) this authenticator makes keys for, in
/// the identifiers `pubKeyCredParams` lists them by.
public enum COSEAlgorithm: Int, Sendable, CaseIterable, CustomStringConvertible {
    /// ECDSA on P-256 with SHA-256 (RFC 9053 §2.1); every authenticator's first choice.
    case es256 = -7
    /// EdDSA (RFC 9053 §2.2), here always on Ed25519 (RFC 8032), as authenticators use it.
    case edDSA = -8
    /// RSASSA-PKCS1-v1_5 with SHA-256 (RFC 8812 §2), on a 2048-bit key: Windows Hello's.
    case rs256 = -257

    public var name: String {
        switch self {
        case .es256: "ES256"
        case .edDSA: "EdDSA"
        case .rs256: "RS256"
        }
    }

    public var description: String { "\(name) (\(rawValue))" }

    /// From a name as a user types it (`es256`, `EdDSA`, `-257`).
    public init?(name: String) {
        if let number = Int(name), let algorithm = COSEAlgorithm(rawValue: number) {
            self = algorithm
            return
        }
        guard let algorithm = COSEAlgorithm.allCases.first(where: { $0.name.lowercased() == name.lowercased() }) else { return nil }
        self = algorithm
    }

    /// The first of the RP's `pubKeyCredParams` (in its order of preference) that is also in
    /// `supported`; `nil` when none is (`NotSupportedError`).
    package static func choose(from requested: [Int], supported: [COSEAlgorithm] = allCases) -> COSEAlgorithm? {
        for identifier in requested {
            if let algorithm = COSEAlgorithm(rawValue: identifier), supported.contains(algorithm) { return algorithm }
        }
        return nil
    }
}
