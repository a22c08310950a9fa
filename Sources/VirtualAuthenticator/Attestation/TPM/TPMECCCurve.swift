/// TPM_ECC_CURVE (TPM 2.0 Library Part 2 §6.4), as UINT16.
package enum TPMECCCurve: UInt16, Sendable {
    case nistP256 = 0x0003
}
