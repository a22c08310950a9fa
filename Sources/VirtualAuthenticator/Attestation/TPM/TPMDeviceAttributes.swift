/// The TCG device attributes an AIK certificate names its TPM by (TCG EK Credential Profile for
/// TPM Family 2.0 §3.1.2, §3.2.9), each a UTF8String.
package struct TPMDeviceAttributes: Equatable, Sendable {
    /// tcg-at-tpmManufacturer 2.23.133.2.1: "id:" and the vendor id in hex from the TCG
    /// vendor registry ("id:4D534654" Microsoft, "id:414D4400" AMD). Verifiers look it up.
    package let manufacturer: String
    /// tcg-at-tpmModel 2.23.133.2.2.
    package let model: String
    /// tcg-at-tpmVersion 2.23.133.2.3: "id:" and the firmware version in hex.
    package let version: String

    package init(manufacturer: String, model: String, version: String) {
        self.manufacturer = manufacturer
        self.model = model
        self.version = version
    }

    /// Microsoft's software TPM, as a Windows machine without a hardware TPM names it.
    package static let microsoft = TPMDeviceAttributes(manufacturer: "id:4D534654", model: "MSFT", version: "id:0002")

    package static let manufacturerOID = "2.23.133.2.1"
    package static let modelOID = "2.23.133.2.2"
    package static let versionOID = "2.23.133.2.3"

    /// A Name (RDNSequence) of one RelativeDistinguishedName holding the three attributes, as
    /// DER orders a SET OF.
    package func directoryName() -> [UInt8] {
        DER.sequence([
            DER.set([
                DER.sequence([DER.oid(Self.manufacturerOID), DER.utf8String(manufacturer)]),
                DER.sequence([DER.oid(Self.modelOID), DER.utf8String(model)]),
                DER.sequence([DER.oid(Self.versionOID), DER.utf8String(version)]),
            ])
        ])
    }
}
