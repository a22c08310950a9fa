/// TPMS_CERTIFY_INFO (TPM 2.0 Library Part 2 §10.12.3): what TPM2_Certify attests of an object.
///
///     name (TPM2B_NAME) ‖ qualifiedName (TPM2B_NAME)
package struct TPMSCertifyInfo: Equatable, Sendable {
    /// The object's Name: nameAlg ‖ H(pubArea) (``TPMTPublic/name()``).
    package let name: [UInt8]
    package let qualifiedName: [UInt8]

    package init(name: [UInt8], qualifiedName: [UInt8]) {
        self.name = name
        self.qualifiedName = qualifiedName
    }

    /// The certify info of `object`, a child of the object whose Qualified Name is
    /// `parentQualifiedName` (TPM 2.0 Library Part 1 §16: QN = nameAlg ‖ H(parent's QN ‖ Name);
    /// a hierarchy's Qualified Name is its handle).
    package init(object: TPMTPublic, parentQualifiedName: [UInt8]) {
        let name = object.name()
        self.init(name: name, qualifiedName: Self.qualifiedName(of: name, parentQualifiedName: parentQualifiedName))
    }

    /// A Qualified Name (Part 1 §16): SHA-256's TPM_ALG_ID ‖ SHA-256(parent's QN ‖ `name`).
    package static func qualifiedName(of name: [UInt8], parentQualifiedName: [UInt8]) -> [UInt8] {
        TPMTPublic.nameAlg.encoded + SHA256.hash(parentQualifiedName + name)
    }

    package func encoded() -> [UInt8] {
        TPM2B.encoded(name) + TPM2B.encoded(qualifiedName)
    }
}
