/// The authenticator's own attestation CA (WebAuthn L3 §6.5.3, "Attestation CA"): a self-signed
/// root, one issuing intermediate it certified, and a batch attestation key (ECDSA P-256) whose
/// certificates it issues on demand. Leaves for a given public key (an apple or android-key
/// credential certificate) are issued the same way.
///
/// Made once and kept: ``serialized()`` and ``init(serialized:)`` round-trip it exactly. The
/// serialization holds the private keys; whoever stores it must seal it.
public struct AttestationCA: Sendable {
    package let root: X509Certificate
    package let intermediate: X509Certificate
    /// The batch attestation key (packed, fido-u2f; a TPM attestation identity key later).
    package let attestationKey: PrivateKey
    private let rootKey: PrivateKey
    private let intermediateKey: PrivateKey

    /// Which CA certificate signs a leaf. A fido-u2f statement carries only its leaf, so a verifier
    /// trusting the root can only follow a leaf the root signed itself.
    package enum Issuer: Sendable { case root, intermediate }

    package struct LoadError: Error, Sendable, CustomStringConvertible {
        package let description: String
    }

    private init(root: X509Certificate, rootKey: PrivateKey, intermediate: X509Certificate,
                 intermediateKey: PrivateKey, attestationKey: PrivateKey) {
        self.root = root
        self.rootKey = rootKey
        self.intermediate = intermediate
        self.intermediateKey = intermediateKey
        self.attestationKey = attestationKey
    }

    /// Fresh keys, a root (CA:TRUE; keyCertSign, cRLSign) and an intermediate (CA:TRUE, pathlen 0)
    /// it signs, both valid for `validity`.
    package static func generate(
        rootSubject: DistinguishedName, intermediateSubject: DistinguishedName, validity: CertificateValidity
    ) throws(OpenSSLFailure) -> AttestationCA {
        let rootKey = try PrivateKey.generate()
        let intermediateKey = try PrivateKey.generate()
        let attestationKey = try PrivateKey.generate()
        let rootSKI = try X509Certificate.keyIdentifier(subjectPublicKeyInfo: rootKey.subjectPublicKeyInfo)
        let root = try CertificateBuilder(
            subject: rootSubject, subjectPublicKeyInfo: rootKey.subjectPublicKeyInfo, validity: validity,
            extensions: [
                .basicConstraints(ca: true), .keyUsage([.keyCertSign, .cRLSign]), .subjectKeyIdentifier(rootSKI),
            ]
        ).selfSigned(with: rootKey)
        let intermediate = try CertificateBuilder(
            subject: intermediateSubject, subjectPublicKeyInfo: intermediateKey.subjectPublicKeyInfo, validity: validity,
            extensions: [
                .basicConstraints(ca: true, pathLength: 0), .keyUsage([.keyCertSign, .cRLSign]),
                .subjectKeyIdentifier(try X509Certificate.keyIdentifier(subjectPublicKeyInfo: intermediateKey.subjectPublicKeyInfo)),
                .authorityKeyIdentifier(rootSKI),
            ]
        ).signed(by: root, key: rootKey)
        return AttestationCA(root: root, rootKey: rootKey, intermediate: intermediate,
                             intermediateKey: intermediateKey, attestationKey: attestationKey)
    }

    /// The validity of every certificate an authenticator's CA makes: from 2020-01-01 with no
    /// well-defined expiration (RFC 5280 §4.1.2.5), so no certificate is "not yet valid" to an RP
    /// whatever clock made it (a scenario's virtual one included).
    package static let validity = CertificateValidity.unbounded(from: 1_577_836_800)

    /// The CA a vault gets: authctl's names, ``validity``.
    public static func generate() throws(OpenSSLFailure) -> AttestationCA {
        try generate(rootSubject: DistinguishedName([("C", "US"), ("O", "authctl"), ("CN", "authctl Attestation Root CA")]),
                     intermediateSubject: DistinguishedName([("C", "US"), ("O", "authctl"), ("OU", "Authenticator Attestation"),
                                                             ("CN", "authctl Attestation CA 1")]),
                     validity: validity)
    }

    public var rootDER: [UInt8] { root.der }
    public var rootPEM: String { root.pem }

    /// The certificates a verifier needs between a leaf `issuer` signed and the root (the root
    /// itself excluded).
    package func chain(above issuer: Issuer) -> [X509Certificate] {
        issuer == .intermediate ? [intermediate] : []
    }

    /// A certificate for the batch attestation key. With `aaguid`, it carries id-fido-gen-ce-aaguid
    /// (WebAuthn L3 §8.2.1). See ``issueCertificate(subject:subjectPublicKeyInfo:extensions:validity:issuer:)``
    /// for the extensions every leaf gets.
    package func issueAttestationCertificate(
        subject: DistinguishedName, aaguid: [UInt8]?, extensions: [CertificateExtension] = [],
        validity: CertificateValidity, issuer: Issuer = .intermediate
    ) throws(OpenSSLFailure) -> X509Certificate {
        var all = extensions
        if let aaguid { all.append(.fidoAAGUID(aaguid)) }
        return try issueCertificate(subject: subject, subjectPublicKeyInfo: attestationKey.subjectPublicKeyInfo,
                                    extensions: all, validity: validity, issuer: issuer)
    }

    /// An end-entity certificate for any public key. It carries basicConstraints CA:FALSE
    /// (critical), keyUsage digitalSignature (critical), subjectKeyIdentifier and
    /// authorityKeyIdentifier, then `extensions`; an extension in `extensions` with one of those
    /// OIDs replaces the default one.
    package func issueCertificate(
        subject: DistinguishedName, subjectPublicKeyInfo: [UInt8], extensions: [CertificateExtension] = [],
        validity: CertificateValidity, issuer: Issuer = .intermediate
    ) throws(OpenSSLFailure) -> X509Certificate {
        let (issuerCertificate, issuerKey) = issuer == .root ? (root, rootKey) : (intermediate, intermediateKey)
        var all: [CertificateExtension] = [
            .basicConstraints(ca: false), .keyUsage(.digitalSignature),
            .subjectKeyIdentifier(try X509Certificate.keyIdentifier(subjectPublicKeyInfo: subjectPublicKeyInfo)),
        ]
        if let authorityKey = issuerCertificate.subjectKeyIdentifier { all.append(.authorityKeyIdentifier(authorityKey)) }
        all.removeAll { standard in extensions.contains { $0.oid == standard.oid } }
        all += extensions
        return try CertificateBuilder(subject: subject, subjectPublicKeyInfo: subjectPublicKeyInfo, validity: validity,
                                      extensions: all).signed(by: issuerCertificate, key: issuerKey)
    }

    // MARK: Serialization

    private static let version = 1

    /// A CBOR map {"v": 1, "root", "rootKey", "intermediate", "intermediateKey", "attestationKey"}:
    /// certificates as DER, private keys as DER (RFC 5915 ECPrivateKey).
    package func serialized() throws(OpenSSLFailure) -> [UInt8] {
        CBORValue.map([
            (.text("v"), .int(Self.version)),
            (.text("root"), .bytes(root.der)),
            (.text("rootKey"), .bytes(try Self.der(of: rootKey))),
            (.text("intermediate"), .bytes(intermediate.der)),
            (.text("intermediateKey"), .bytes(try Self.der(of: intermediateKey))),
            (.text("attestationKey"), .bytes(try Self.der(of: attestationKey))),
        ]).encoded()
    }

    /// Reads what ``serialized()`` wrote, checking each certificate against its key.
    package init(serialized bytes: [UInt8]) throws(LoadError) {
        let map: CBORValue
        do { map = try CBORValue.decode(bytes) } catch { throw LoadError(description: "attestation CA: \(error)") }
        guard map[.text("v")]?.intValue == Self.version else { throw LoadError(description: "attestation CA: unknown version") }
        func field(_ name: String) throws(LoadError) -> [UInt8] {
            guard let value = map[.text(name)]?.bytesValue else { throw LoadError(description: "attestation CA: no \(name)") }
            return value
        }
        func key(_ name: String) throws(LoadError) -> PrivateKey {
            let der = try field(name)
            do { return try der.withUnsafeBytes { buffer throws(OpenSSLFailure) in try PrivateKey.load(der: buffer) } }
            catch { throw LoadError(description: "attestation CA: \(name): \(error)") }
        }
        func certificate(_ name: String) throws(LoadError) -> X509Certificate {
            do { return try X509Certificate(der: try field(name)) }
            catch let error as LoadError { throw error }
            catch { throw LoadError(description: "attestation CA: \(name): \(error)") }
        }
        let root = try certificate("root"), intermediate = try certificate("intermediate")
        let rootKey = try key("rootKey"), intermediateKey = try key("intermediateKey")
        guard root.subjectPublicKeyInfo == rootKey.subjectPublicKeyInfo,
            intermediate.subjectPublicKeyInfo == intermediateKey.subjectPublicKeyInfo
        else { throw LoadError(description: "attestation CA: a certificate does not match its key") }
        self.init(root: root, rootKey: rootKey, intermediate: intermediate, intermediateKey: intermediateKey,
                  attestationKey: try key("attestationKey"))
    }

    private static func der(of key: PrivateKey) throws(OpenSSLFailure) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: key.privateKeyDERCount)
        let written = out.withUnsafeMutableBytes { buffer in Result { () throws(OpenSSLFailure) in try key.writePrivateKeyDER(into: buffer) } }
        return Array(out.prefix(try written.get()))
    }
}
