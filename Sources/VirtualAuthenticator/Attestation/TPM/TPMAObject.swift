/// TPMA_OBJECT (TPM 2.0 Library Part 2 §8.3): an object's attributes, a UINT32 bit field.
package struct TPMAObject: OptionSet, Equatable, Sendable {
    package let rawValue: UInt32
    package init(rawValue: UInt32) { self.rawValue = rawValue }

    package static let fixedTPM = TPMAObject(rawValue: 1 << 1)
    package static let stClear = TPMAObject(rawValue: 1 << 2)
    package static let fixedParent = TPMAObject(rawValue: 1 << 4)
    package static let sensitiveDataOrigin = TPMAObject(rawValue: 1 << 5)
    package static let userWithAuth = TPMAObject(rawValue: 1 << 6)
    package static let adminWithPolicy = TPMAObject(rawValue: 1 << 7)
    package static let noDA = TPMAObject(rawValue: 1 << 10)
    package static let encryptedDuplication = TPMAObject(rawValue: 1 << 11)
    package static let restricted = TPMAObject(rawValue: 1 << 16)
    package static let decrypt = TPMAObject(rawValue: 1 << 17)
    package static let sign = TPMAObject(rawValue: 1 << 18)

    /// A Windows Hello credential key: created inside the TPM and bound to it and its parent,
    /// usable with its auth value, exempt from dictionary-attack lockout, and an unrestricted
    /// signing and decryption key (0x00060472).
    package static let windowsHelloCredentialKey: TPMAObject = [
        .fixedTPM, .fixedParent, .sensitiveDataOrigin, .userWithAuth, .noDA, .decrypt, .sign,
    ]
}
