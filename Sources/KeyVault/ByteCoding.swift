/// Big-endian integers, the byte order of every number in the vault's files.
enum BigEndian {
    /// `bytes` read as an unsigned big-endian integer; the caller has checked their number.
    static func integer<T: FixedWidthInteger>(_ bytes: some Collection<UInt8>) -> T {
        bytes.reduce(T(0)) { $0 << 8 | T($1) }
    }

    static func bytes<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian, Array.init)
    }
}

/// Big-endian integer and length-prefixed encoding shared by the header, frames and records.
struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    mutating func append(_ raw: [UInt8]) { bytes += raw }
    mutating func append<T: FixedWidthInteger>(_ value: T) {
        bytes += BigEndian.bytes(value)
    }
}

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

    mutating func read<T: FixedWidthInteger>(_: T.Type) throws(VaultError) -> T {
        BigEndian.integer(try take(MemoryLayout<T>.size))
    }
}

/// Bytes as a dictionary key, hashed in one call rather than byte by byte (what `[UInt8]`'s own
/// `Hashable` does): record ids and indexed field values, by the hundred thousand at open.
struct ByteKey: Hashable {
    let bytes: ArraySlice<UInt8>

    init(_ bytes: [UInt8]) { self.bytes = bytes[...] }
    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    static func == (a: ByteKey, b: ByteKey) -> Bool { a.bytes.elementsEqual(b.bytes) }
}
