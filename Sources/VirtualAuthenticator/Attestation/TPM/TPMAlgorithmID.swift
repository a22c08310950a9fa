@_spi(ByteOrder) import ByteOrder

/// TPM_ALG_ID (TPM 2.0 Library Part 2 §6.3): the algorithm identifiers a `tpm` statement's
/// structures carry, as UINT16.
package enum TPMAlgorithmID: UInt16, Sendable {
    case rsa = 0x0001
    case sha256 = 0x000B
    case null = 0x0010
    case ecc = 0x0023

    var encoded: [UInt8] { BigEndianBytes.of(rawValue) }
}
