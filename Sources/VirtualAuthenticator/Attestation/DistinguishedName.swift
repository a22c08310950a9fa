/// An X.501 distinguished name (RFC 5280 §4.1.2.4) as an ordered list of attributes, one per RDN.
/// May be empty: a TPM attestation identity key certificate has an empty subject (TPMv2-EK-Profile;
/// WebAuthn L3 §8.3.1) and names its subject in subjectAltName instead.
package struct DistinguishedName: Sendable, Equatable {
    package struct Attribute: Sendable, Equatable {
        /// OpenSSL's short name ("C", "O", "OU", "CN", "ST", "L") or a dotted OID.
        package var type: String
        package var value: String

        package init(type: String, value: String) {
            self.type = type
            self.value = value
        }
    }

    package var attributes: [Attribute]

    package init(_ attributes: [(type: String, value: String)]) {
        self.attributes = attributes.map { Attribute(type: $0.type, value: $0.value) }
    }

    package static let empty = DistinguishedName([])

    /// The subject WebAuthn L3 §8.2.1 requires of a packed attestation certificate:
    /// C=country, O=vendor, OU="Authenticator Attestation" (literal), CN=commonName.
    package static func authenticatorAttestation(country: String, organization: String, commonName: String) -> DistinguishedName {
        DistinguishedName([("C", country), ("O", organization), ("OU", "Authenticator Attestation"), ("CN", commonName)])
    }
}
