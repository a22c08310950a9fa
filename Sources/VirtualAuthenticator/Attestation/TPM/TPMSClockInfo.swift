@_spi(ByteOrder) import ByteOrder

/// TPMS_CLOCK_INFO (TPM 2.0 Library Part 2 §10.11.1): the TPM's clock when it signed.
///
///     clock (UINT64, ms) ‖ resetCount (UINT32) ‖ restartCount (UINT32) ‖ safe (BYTE, 0 or 1)
package struct TPMSClockInfo: Equatable, Sendable {
    package let clock: UInt64
    package let resetCount: UInt32
    package let restartCount: UInt32
    package let safe: Bool

    package init(clock: UInt64, resetCount: UInt32, restartCount: UInt32, safe: Bool = true) {
        self.clock = clock
        self.resetCount = resetCount
        self.restartCount = restartCount
        self.safe = safe
    }

    /// 17 bytes.
    package func encoded() -> [UInt8] {
        BigEndianBytes.of(clock) + BigEndianBytes.of(resetCount) + BigEndianBytes.of(restartCount) + [safe ? 1 : 0]
    }
}
