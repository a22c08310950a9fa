import COpenSSL

/// A DER-encoded X.509 certificate (RFC 5280), checked to parse when it is made. Reading a field
/// parses it again through OpenSSL; no OpenSSL object outlives a call.
package struct X509Certificate: Sendable, Equatable {
    package let der: [UInt8]

    /// Accepts exactly one DER certificate, nothing trailing.
    package init(der: [UInt8]) throws(OpenSSLFailure) {
        self.der = der
        try withX509 { _ throws(OpenSSLFailure) in }
    }

    /// Parses `der` into an OpenSSL `X509` that lives only for the call.
    private func withX509<R>(_ body: (OpaquePointer) throws(OpenSSLFailure) -> R) throws(OpenSSLFailure) -> R {
        var consumed = 0
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            let x = d2i_X509(nil, &cursor, buffer.count)
            if let cursor, let base = buffer.baseAddress { consumed = cursor - base }
            return x
        }
        guard let x509 = parsed else { throw OpenSSLFailure("d2i_X509") }
        defer { X509_free(x509) }
        guard consumed == der.count else { throw OpenSSLFailure("trailing bytes after the certificate") }
        return try body(x509)
    }

    /// PEM ("-----BEGIN CERTIFICATE-----", base64 in 64-column lines), as OpenSSL writes it.
    package var pem: String {
        let text = try? withX509 { x509 throws(OpenSSLFailure) -> String in
            guard let bio = BIO_new(BIO_s_mem()) else { throw OpenSSLFailure("BIO_new") }
            defer { BIO_free(bio) }
            guard PEM_write_bio_X509(bio, x509) == 1 else { throw OpenSSLFailure("PEM_write_bio_X509") }
            var data: UnsafePointer<UInt8>? = nil
            let count = authctl_bio_get_mem_data(bio, &data)
            guard count > 0, let data else { throw OpenSSLFailure("BIO_get_mem_data") }
            return String(decoding: UnsafeBufferPointer(start: data, count: Int(count)), as: UTF8.self)
        }
        guard let text else { preconditionFailure("a parsed certificate could not be written as PEM") }
        return text
    }

    /// The subject's DER SubjectPublicKeyInfo.
    package var subjectPublicKeyInfo: [UInt8] {
        let spki = try? withX509 { x509 throws(OpenSSLFailure) -> [UInt8] in
            guard let key = X509_get_X509_PUBKEY(x509) else { throw OpenSSLFailure("X509_get_X509_PUBKEY") }
            let length = i2d_X509_PUBKEY(key, nil)
            guard length > 0 else { throw OpenSSLFailure("i2d_X509_PUBKEY") }
            var out = [UInt8](repeating: 0, count: Int(length))
            out.withUnsafeMutableBufferPointer { buffer in
                var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
                _ = i2d_X509_PUBKEY(key, &cursor)
            }
            return out
        }
        guard let spki else { preconditionFailure("a parsed certificate has no readable public key") }
        return spki
    }

    /// The subjectKeyIdentifier extension's key identifier, if the certificate has one.
    package var subjectKeyIdentifier: [UInt8]? {
        try? withX509 { x509 throws(OpenSSLFailure) -> [UInt8] in
            guard let id = X509_get0_subject_key_id(x509) else { ERR_clear_error(); throw OpenSSLFailure("no subjectKeyIdentifier") }
            return Self.bytes(of: id)
        }
    }

    /// The extension with `oid`, if present: its criticality and extnValue contents.
    package func `extension`(_ oid: String) -> CertificateExtension? {
        try? withX509 { x509 throws(OpenSSLFailure) -> CertificateExtension in
            guard let object = OBJ_txt2obj(oid, 1) else { throw OpenSSLFailure("OBJ_txt2obj") }
            defer { ASN1_OBJECT_free(object) }
            let index = X509_get_ext_by_OBJ(x509, object, -1)
            guard index >= 0, let ext = X509_get_ext(x509, index), let data = X509_EXTENSION_get_data(ext) else {
                throw OpenSSLFailure("no extension \(oid)")
            }
            return CertificateExtension(oid: oid, critical: X509_EXTENSION_get_critical(ext) == 1, value: Self.bytes(of: UnsafePointer(data)))
        }
    }

    /// The DER encoding of the subject name.
    package var subjectNameDER: [UInt8] {
        (try? withX509 { x509 throws(OpenSSLFailure) -> [UInt8] in
            try Self.encode(X509_get_subject_name(x509))
        }) ?? []
    }

    /// The usual key identifier (RFC 5280 §4.2.1.2 method 1): SHA-1 of the subjectPublicKey BIT
    /// STRING's value (no tag, length or unused-bits count) in a DER SubjectPublicKeyInfo.
    package static func keyIdentifier(subjectPublicKeyInfo spki: [UInt8]) throws(OpenSSLFailure) -> [UInt8] {
        let parsed: OpaquePointer? = spki.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_X509_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let key = parsed else { throw OpenSSLFailure("d2i_X509_PUBKEY") }
        defer { X509_PUBKEY_free(key) }
        var bits: UnsafePointer<UInt8>? = nil
        var count: Int32 = 0
        guard X509_PUBKEY_get0_param(nil, &bits, &count, nil, key) == 1, let bits else {
            throw OpenSSLFailure("X509_PUBKEY_get0_param")
        }
        var digest = [UInt8](repeating: 0, count: 20)
        guard EVP_Digest(bits, Int(count), &digest, nil, EVP_sha1(), nil) == 1 else { throw OpenSSLFailure("EVP_Digest(SHA-1)") }
        return digest
    }

    private static func bytes(of string: UnsafePointer<ASN1_STRING>) -> [UInt8] {
        let count = Int(ASN1_STRING_length(string))
        guard count > 0, let data = ASN1_STRING_get0_data(string) else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: count))
    }

    private static func encode(_ name: OpaquePointer?) throws(OpenSSLFailure) -> [UInt8] {
        guard let name else { throw OpenSSLFailure("no name") }
        let length = i2d_X509_NAME(name, nil)
        guard length > 0 else { throw OpenSSLFailure("i2d_X509_NAME") }
        var out = [UInt8](repeating: 0, count: Int(length))
        out.withUnsafeMutableBufferPointer { buffer in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            _ = i2d_X509_NAME(name, &cursor)
        }
        return out
    }
}
