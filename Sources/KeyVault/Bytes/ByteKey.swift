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
