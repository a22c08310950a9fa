@_spi(ByteOrder) import ByteOrder
import COpenSSL
import Synchronization

/// Where the authenticator's randomness comes from: credential ids, and challenges a caller
/// invents. Injected so tests and scenarios can be deterministic.
public struct RandomSource: Sendable {
    public let bytes: @Sendable (Int) -> [UInt8]

    public init(bytes: @escaping @Sendable (Int) -> [UInt8]) { self.bytes = bytes }

    /// A deterministic stream from `seed`: SHA-256 of the seed and a block counter. For scenarios
    /// and tests that must repeat byte for byte (credential ids); never for keys that protect
    /// anything.
    public static func seeded(_ seed: UInt64) -> RandomSource {
        let state = Mutex((block: UInt64(0), buffer: [UInt8]()))
        return RandomSource { count in
            state.withLock { s in
                while s.buffer.count < count {
                    s.buffer += SHA256.hash(Array("AUTHCTL-SEEDED".utf8) + BigEndianBytes.of(seed) + BigEndianBytes.of(s.block))
                    s.block += 1
                }
                let out = Array(s.buffer.prefix(count))
                s.buffer.removeFirst(count)
                return out
            }
        }
    }

    /// OpenSSL's CSPRNG.
    public static let live = RandomSource { count in
        var out = [UInt8](repeating: 0, count: count)
        precondition(RAND_bytes(&out, Int32(count)) == 1, "RAND_bytes failed")
        return out
    }
}
