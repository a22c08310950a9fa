/// TPMA_OBJECT (TPM 2.0 Library Part 2 §8.3): an object's attributes, a UINT32 bit field.
public struct TPMAObject: OptionSet, Equatable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let fixedTPM = TPMAObject(rawValue: 1 << 1)
    public static let stClear = TPMAObject(rawValue: 1 << 2)
    public static let fixedParent = TPMAObject(rawValue: 1 << 4)
    public static let sensitiveDataOrigin = TPMAObject(rawValue: 1 << 5)
    public static let userWithAuth = TPMAObject(rawValue: 1 << 6)
    public static let adminWithPolicy = TPMAObject(rawValue: 1 << 7)
    public static let noDA = TPMAObject(rawValue: 1 << 10)
    public static let encryptedDuplication = TPMAObject(rawValue: 1 << 11)
    public static let restricted = TPMAObject(rawValue: 1 << 16)
    public static let decrypt = TPMAObject(rawValue: 1 << 17)
    public static let sign = TPMAObject(rawValue: 1 << 18)

    /// A Windows Hello credential key: created inside the TPM and bound to it and its parent,
    /// usable with its auth value, exempt from dictionary-attack lockout, and an unrestricted
    /// signing and decryption key (0x00060472).
    public static let windowsHelloCredentialKey: TPMAObject = [
        .fixedTPM, .fixedParent, .sensitiveDataOrigin, .userWithAuth, .noDA, .decrypt, .sign,
    ]
}
