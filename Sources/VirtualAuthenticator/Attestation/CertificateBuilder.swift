import COpenSSL

/// Builds an X.509 v3 certificate (RFC 5280) through OpenSSL's X509 API and signs it with an
/// ECDSA P-256 issuer key (ecdsa-with-SHA256). OpenSSL encodes the TBSCertificate; the issuer key
/// signs those bytes and the certificate is assembled around them, so the builder never needs the
/// issuer's OpenSSL key object.
package struct CertificateBuilder: Sendable {
    package var subject: DistinguishedName
    /// The subject's public key as a DER SubjectPublicKeyInfo (any algorithm OpenSSL knows).
    package var subjectPublicKeyInfo: [UInt8]
    package var validity: CertificateValidity
    /// In the order they appear in the certificate.
    package var extensions: [CertificateExtension]
    /// Big-endian magnitude; `nil` picks 16 random bytes (a positive number of 127 bits at most,
    /// at least 119: RFC 5280 §4.1.2.2 and the CA/Browser Forum's 64 random bits).
    package var serialNumber: [UInt8]?

    package init(subject: DistinguishedName, subjectPublicKeyInfo: [UInt8], validity: CertificateValidity,
                extensions: [CertificateExtension] = [], serialNumber: [UInt8]? = nil) {
        self.subject = subject
        self.subjectPublicKeyInfo = subjectPublicKeyInfo
        self.validity = validity
        self.extensions = extensions
        self.serialNumber = serialNumber
    }

    /// ecdsa-with-SHA256 (RFC 5758 §3.2): the AlgorithmIdentifier has no parameters.
    private static let ecdsaWithSHA256 = DER.sequence([DER.oid("1.2.840.10045.4.3.2")])

    /// A self-signed certificate: the issuer is the subject, and `key` must be the subject's key.
    package func selfSigned(with key: PrivateKey) throws(OpenSSLFailure) -> X509Certificate {
        guard key.subjectPublicKeyInfo == subjectPublicKeyInfo else {
            throw OpenSSLFailure("the signing key is not the subject's key")
        }
        return try build(issuerName: nil, key: key)
    }

    /// A certificate issued by `issuer`, signed with `key`, which must be `issuer`'s key.
    package func signed(by issuer: X509Certificate, key: PrivateKey) throws(OpenSSLFailure) -> X509Certificate {
        guard key.subjectPublicKeyInfo == issuer.subjectPublicKeyInfo else {
            throw OpenSSLFailure("the signing key is not the issuer certificate's key")
        }
        return try build(issuerName: issuer.subjectNameDER, key: key)
    }

    private func build(issuerName: [UInt8]?, key: PrivateKey) throws(OpenSSLFailure) -> X509Certificate {
        guard let x509 = X509_new() else { throw OpenSSLFailure("X509_new") }
        defer { X509_free(x509) }
        guard X509_set_version(x509, Int(X509_VERSION_3)) == 1 else { throw OpenSSLFailure("X509_set_version") }
        try setSerialNumber(x509)

        let subjectName = try Self.name(subject)
        defer { X509_NAME_free(subjectName) }
        guard X509_set_subject_name(x509, subjectName) == 1 else { throw OpenSSLFailure("X509_set_subject_name") }
        if let issuerName {
            let parsed: OpaquePointer? = issuerName.withUnsafeBufferPointer { buffer in
                var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
                return d2i_X509_NAME(nil, &cursor, buffer.count)
            }
            guard let parsed else { throw OpenSSLFailure("d2i_X509_NAME") }
            defer { X509_NAME_free(parsed) }
            guard X509_set_issuer_name(x509, parsed) == 1 else { throw OpenSSLFailure("X509_set_issuer_name") }
        } else {
            guard X509_set_issuer_name(x509, subjectName) == 1 else { throw OpenSSLFailure("X509_set_issuer_name") }
        }

        try setTime(validity.notBefore, x509, X509_set1_notBefore)
        try setTime(validity.notAfter, x509, X509_set1_notAfter)

        let publicKey: OpaquePointer? = subjectPublicKeyInfo.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let publicKey else { throw OpenSSLFailure("d2i_PUBKEY (subject public key)") }
        defer { EVP_PKEY_free(publicKey) }
        guard X509_set_pubkey(x509, publicKey) == 1 else { throw OpenSSLFailure("X509_set_pubkey") }

        for ext in extensions { try add(ext, to: x509) }

        // The TBSCertificate names its own signature algorithm; X509_sign would set it, here it is
        // set by hand before the TBSCertificate is encoded.
        guard let algorithm = X509_get0_tbs_sigalg(x509),
            X509_ALGOR_set0(UnsafeMutablePointer(mutating: algorithm), OBJ_nid2obj(NID_ecdsa_with_SHA256), V_ASN1_UNDEF, nil) == 1
        else { throw OpenSSLFailure("X509_ALGOR_set0") }
        let length = i2d_re_X509_tbs(x509, nil)
        guard length > 0 else { throw OpenSSLFailure("i2d_re_X509_tbs") }
        var tbs = [UInt8](repeating: 0, count: Int(length))
        let written = tbs.withUnsafeMutableBufferPointer { buffer in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_re_X509_tbs(x509, &cursor)
        }
        guard written == length else { throw OpenSSLFailure("i2d_re_X509_tbs") }

        // Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signatureValue BIT STRING }
        let signature = try key.sign(tbs)
        return try X509Certificate(der: DER.sequence([tbs, Self.ecdsaWithSHA256, DER.bitString(signature)]))
    }

    private func setSerialNumber(_ x509: OpaquePointer) throws(OpenSSLFailure) {
        var magnitude: [UInt8]
        if let serialNumber {
            magnitude = serialNumber
        } else {
            magnitude = [UInt8](repeating: 0, count: 16)
            guard RAND_bytes(&magnitude, Int32(magnitude.count)) == 1 else { throw OpenSSLFailure("RAND_bytes") }
            magnitude[0] = (magnitude[0] & 0x7F) | 0x40  // positive, and 16 significant bytes
        }
        guard let bn = BN_bin2bn(magnitude, Int32(magnitude.count), nil) else { throw OpenSSLFailure("BN_bin2bn") }
        defer { BN_free(bn) }
        guard let integer = BN_to_ASN1_INTEGER(bn, nil) else { throw OpenSSLFailure("BN_to_ASN1_INTEGER") }
        defer { ASN1_INTEGER_free(integer) }
        guard X509_set_serialNumber(x509, integer) == 1 else { throw OpenSSLFailure("X509_set_serialNumber") }
    }

    /// RFC 5280 §4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050 (ASN1_TIME_set chooses so).
    private func setTime(_ seconds: Int64, _ x509: OpaquePointer,
                         _ setter: (OpaquePointer?, UnsafePointer<ASN1_TIME>?) -> Int32) throws(OpenSSLFailure) {
        guard let time = ASN1_TIME_set(nil, time_t(seconds)) else { throw OpenSSLFailure("ASN1_TIME_set(\(seconds))") }
        defer { ASN1_TIME_free(time) }
        let year = Self.year(ofEpochSeconds: seconds)
        let expected = (1950...2049).contains(year) ? V_ASN1_UTCTIME : V_ASN1_GENERALIZEDTIME
        guard ASN1_STRING_type(time) == expected else { throw OpenSSLFailure("ASN1_TIME_set chose the wrong time type for \(seconds)") }
        guard setter(x509, time) == 1 else { throw OpenSSLFailure("X509_set1_notBefore/notAfter") }
    }

    /// The proleptic Gregorian year of a Unix time (days-from-civil inverted, Howard Hinnant's algorithm).
    static func year(ofEpochSeconds seconds: Int64) -> Int64 {
        let days = (seconds >= 0 ? seconds : seconds - 86_399) / 86_400
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        return yearOfEra + era * 400 + (monthIndex >= 10 ? 1 : 0)
    }

    private static func name(_ name: DistinguishedName) throws(OpenSSLFailure) -> OpaquePointer {
        guard let x509Name = X509_NAME_new() else { throw OpenSSLFailure("X509_NAME_new") }
        for attribute in name.attributes {
            let value = Array(attribute.value.utf8)
            let ok = X509_NAME_add_entry_by_txt(x509Name, attribute.type, authctl_mbstring_utf8, value, Int32(value.count), -1, 0)
            guard ok == 1 else {
                X509_NAME_free(x509Name)
                throw OpenSSLFailure("X509_NAME_add_entry_by_txt(\(attribute.type))")
            }
        }
        return x509Name
    }

    private func add(_ ext: CertificateExtension, to x509: OpaquePointer) throws(OpenSSLFailure) {
        guard let object = OBJ_txt2obj(ext.oid, 1) else { throw OpenSSLFailure("OBJ_txt2obj(\(ext.oid))") }
        defer { ASN1_OBJECT_free(object) }
        guard let value = ASN1_OCTET_STRING_new() else { throw OpenSSLFailure("ASN1_OCTET_STRING_new") }
        defer { ASN1_OCTET_STRING_free(value) }
        guard ASN1_OCTET_STRING_set(value, ext.value, Int32(ext.value.count)) == 1 else { throw OpenSSLFailure("ASN1_OCTET_STRING_set") }
        guard let created = X509_EXTENSION_create_by_OBJ(nil, object, ext.critical ? 1 : 0, value) else {
            throw OpenSSLFailure("X509_EXTENSION_create_by_OBJ(\(ext.oid))")
        }
        defer { X509_EXTENSION_free(created) }
        guard X509_add_ext(x509, created, -1) == 1 else { throw OpenSSLFailure("X509_add_ext(\(ext.oid))") }
    }
}
