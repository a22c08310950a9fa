#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Bytes as a dictionary key, hashed in one call rather than byte by byte (what `[UInt8]`'s own
/// `Hashable` does): record ids and indexed field values, by the hundred thousand at open.
/// Ordered bytewise (shorter first when one is a prefix of the other), compared with one
/// `memcmp`: the index sorts the entries of every lookup bucket it writes.
struct ByteKey: Hashable, Comparable {
    let bytes: ArraySlice<UInt8>

    init(_ bytes: [UInt8]) { self.bytes = bytes[...] }
    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    static func == (a: ByteKey, b: ByteKey) -> Bool { a.bytes.count == b.bytes.count && compare(a, b) == 0 }

    static func < (a: ByteKey, b: ByteKey) -> Bool { compare(a, b) < 0 }

    private static func compare(_ a: ByteKey, _ b: ByteKey) -> Int {
        a.bytes.withUnsafeBytes { x in
            b.bytes.withUnsafeBytes { y in
                let common = min(x.count, y.count)
                let order = common == 0 ? 0 : Int(memcmp(x.baseAddress!, y.baseAddress!, common))
                return order != 0 ? order : x.count - y.count
            }
        }
    }
}
