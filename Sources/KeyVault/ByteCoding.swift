/// Big-endian integer and length-prefixed encoding shared by the header, frames and records.
struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    mutating func append(_ raw: [UInt8]) { bytes += raw }
    mutating func append<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.bigEndian) { bytes += $0 }
    }
}

struct ByteReader {
    private let bytes: [UInt8]
    private(set) var offset: Int
    let context: String

    init(_ bytes: [UInt8], context: String) {
        self.bytes = bytes
        self.offset = 0
        self.context = context
    }

    var remaining: Int { bytes.count - offset }

    mutating func take(_ count: Int) throws(VaultError) -> [UInt8] {
        guard count >= 0, count <= remaining else {
            throw VaultError(.corrupted, "\(context) is truncated at byte \(offset)")
        }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    mutating func read<T: FixedWidthInteger>(_: T.Type) throws(VaultError) -> T {
        try take(MemoryLayout<T>.size).reduce(T(0)) { $0 << 8 | T($1) }
    }
}
