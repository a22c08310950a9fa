@_spi(ByteOrder) import ByteOrder

/// The TPM's sized byte buffers (TPM 2.0 Library Part 2 §10.4: TPM2B_DIGEST, TPM2B_DATA,
/// TPM2B_NAME, TPM2B_PUBLIC_KEY_RSA, TPM2B_ECC_PARAMETER): a UINT16 size, then the bytes.
enum TPM2B {
    static func encoded(_ buffer: [UInt8]) -> [UInt8] {
        precondition(buffer.count <= Int(UInt16.max), "a TPM2B holds at most 65535 bytes")
        return BigEndianBytes.of(UInt16(buffer.count)) + buffer
    }
}
