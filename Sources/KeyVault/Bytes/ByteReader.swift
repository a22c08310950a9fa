@_spi(ByteOrder) import ByteOrder

/// Reads the vault's big-endian, length-prefixed layouts, naming what it reads in its errors.
struct ByteReader {
    private let bytes: [UInt8]
    private(set) var offset: Int
    /// Names what is being read, in error messages; an autoclosure so that reading the happy
    /// path (a hundred thousand frames at open) never builds the string.
    private let describe: () -> String
    var context: String { describe() }

    init(_ bytes: [UInt8], context: @autoclosure @escaping () -> String) {
        self.bytes = bytes
        self.offset = 0
        self.describe = context
    }

    var remaining: Int { bytes.count - offset }

    mutating func take(_ count: Int) throws(VaultError) -> [UInt8] {
        guard count >= 0, count <= remaining else {
            throw VaultError(.corrupted, "\(context) is truncated at byte \(offset)")
        }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    mutating func skip(_ count: Int) throws(VaultError) {
        guard count >= 0, count <= remaining else {
            throw VaultError(.corrupted, "\(context) is truncated at byte \(offset)")
        }
        offset += count
    }

    /// The bytes from `start` to the current offset, sharing the reader's buffer.
    func slice(from start: Int) -> ArraySlice<UInt8> { bytes[start..<offset] }

    /// A big-endian integer, read in place (no copy of its bytes).
    mutating func read<T: FixedWidthInteger>(_: T.Type) throws(VaultError) -> T {
        let size = MemoryLayout<T>.size
        guard size <= remaining else { throw VaultError(.corrupted, "\(context) is truncated at byte \(offset)") }
        let value: T = BigEndianBytes.integer(bytes[offset..<offset + size])
        offset += size
        return value
    }
}
