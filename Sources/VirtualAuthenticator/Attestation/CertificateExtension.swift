/// One X.509 v3 extension (RFC 5280 §4.1): what a certificate builder places in `extensions`.
/// `value` is the DER content of `extnValue`, the bytes the OCTET STRING wraps.
public struct CertificateExtension: Equatable, Sendable {
    /// The extension's `extnID`, dotted ("2.5.29.17").
    public let oid: String
    public let critical: Bool
    public let value: [UInt8]

    public init(oid: String, critical: Bool, value: [UInt8]) {
        self.oid = oid
        self.critical = critical
        self.value = value
    }
}
