/// A certificate's validity period (RFC 5280 §4.1.2.5), in seconds since the Unix epoch (UTC).
/// Times from 2050 on are encoded as GeneralizedTime, earlier ones as UTCTime.
package struct CertificateValidity: Sendable, Equatable {
    package var notBefore: Int64
    package var notAfter: Int64

    package init(notBefore: Int64, notAfter: Int64) {
        self.notBefore = notBefore
        self.notAfter = notAfter
    }

    /// 9999-12-31T23:59:59Z: "no well-defined expiration date" (RFC 5280 §4.1.2.5).
    package static let noWellDefinedExpiration: Int64 = 253_402_300_799

    /// From `notBefore` until ``noWellDefinedExpiration``.
    package static func unbounded(from notBefore: Int64) -> CertificateValidity {
        CertificateValidity(notBefore: notBefore, notAfter: noWellDefinedExpiration)
    }
}
