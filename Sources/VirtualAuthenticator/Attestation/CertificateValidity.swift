/// A certificate's validity period (RFC 5280 §4.1.2.5), in seconds since the Unix epoch (UTC).
/// Times from 2050 on are encoded as GeneralizedTime, earlier ones as UTCTime.
public struct CertificateValidity: Sendable, Equatable {
    public var notBefore: Int64
    public var notAfter: Int64

    public init(notBefore: Int64, notAfter: Int64) {
        self.notBefore = notBefore
        self.notAfter = notAfter
    }

    /// 9999-12-31T23:59:59Z: "no well-defined expiration date" (RFC 5280 §4.1.2.5).
    public static let noWellDefinedExpiration: Int64 = 253_402_300_799

    /// From `notBefore` until ``noWellDefinedExpiration``.
    public static func unbounded(from notBefore: Int64) -> CertificateValidity {
        CertificateValidity(notBefore: notBefore, notAfter: noWellDefinedExpiration)
    }
}
