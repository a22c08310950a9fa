/// Big-endian integer and length-prefixed encoding shared by the header, frames and records.
struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    mutating func append(_ raw: [UInt8]) { bytes += raw }
    mutating func append(_ raw: ArraySlice<UInt8>) { bytes += raw }
    mutating func append<T: FixedWidthInteger>(_ value: T) {
        // Big-endian, straight from the value's bytes: no array of its own per integer.
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }
}
