@_spi(ByteOrder) import ByteOrder

/// Big-endian integer and length-prefixed encoding shared by the header, frames and records.
struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    mutating func append(_ raw: [UInt8]) { bytes += raw }
    mutating func append<T: FixedWidthInteger>(_ value: T) {
        bytes += BigEndianBytes.of(value)
    }
}
