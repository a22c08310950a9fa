import CCBOR
import Testing
@testable import VirtualAuthenticator

/// The encoder (libcbor's streaming `cbor_encode_*` heads, written into one buffer) writes, for
/// any value, the bytes libcbor serializes from an item tree (with the canonical map order added
/// on top of libcbor).
@Suite struct CBOREncodingTests {
    /// An item tree through libcbor's serializer, maps sorted first.
    static func libcborEncoded(_ value: CBORValue) -> [UInt8] {
        let item = makeItem(value)
        defer { var i: UnsafeMutablePointer<cbor_item_t>? = item; cbor_decref(&i) }
        var buffer: UnsafeMutablePointer<UInt8>? = nil
        var capacity = 0
        let length = cbor_serialize_alloc(item, &buffer, &capacity)
        defer { authctl_cbor_free_buffer(buffer) }
        return Array(UnsafeBufferPointer(start: buffer, count: length))
    }

    static func makeItem(_ value: CBORValue) -> UnsafeMutablePointer<cbor_item_t> {
        func unsigned(_ n: UInt64, negative: Bool) -> UnsafeMutablePointer<cbor_item_t> {
            let item: UnsafeMutablePointer<cbor_item_t>? = switch n {
            case 0...0xFF: cbor_build_uint8(UInt8(n))
            case 0...0xFFFF: cbor_build_uint16(UInt16(n))
            case 0...0xFFFF_FFFF: cbor_build_uint32(UInt32(n))
            default: cbor_build_uint64(n)
            }
            if negative { cbor_mark_negint(item!) }
            return item!
        }
        switch value {
        case .unsigned(let n): return unsigned(n, negative: false)
        case .negative(let n): return unsigned(n, negative: true)
        case .bytes(let b): return b.withUnsafeBufferPointer { cbor_build_bytestring($0.baseAddress, $0.count) }!
        case .text(let t):
            return Array(t.utf8).withUnsafeBufferPointer { p in
                p.withMemoryRebound(to: CChar.self) { cbor_build_stringn($0.baseAddress, $0.count) }
            }!
        case .array(let items):
            let array = cbor_new_definite_array(items.count)!
            for element in items {
                var child: UnsafeMutablePointer<cbor_item_t>? = makeItem(element)
                _ = cbor_array_push(array, child!)
                cbor_decref(&child)
            }
            return array
        case .map(let pairs):
            let map = cbor_new_definite_map(pairs.count)!
            for (_, key, value) in pairs.map({ (libcborEncoded($0.0), $0.0, $0.1) }).sorted(by: { CBORValue.canonicalLess($0.0, $1.0) }) {
                var k: UnsafeMutablePointer<cbor_item_t>? = makeItem(key)
                var v: UnsafeMutablePointer<cbor_item_t>? = makeItem(value)
                _ = cbor_map_add(map, cbor_pair(key: k!, value: v!))
                cbor_decref(&k)
                cbor_decref(&v)
            }
            return map
        case .bool(let b): return cbor_build_bool(b)!
        case .null: return cbor_new_null()!
        }
    }

    static func random(depth: Int, _ g: inout some RandomNumberGenerator) -> CBORValue {
        let edges: [UInt64] = [0, 1, 23, 24, 255, 256, 65535, 65536, 0xFFFF_FFFF, 0x1_0000_0000, .max]
        func number() -> UInt64 { Bool.random(using: &g) ? edges.randomElement(using: &g)! : UInt64.random(in: 0...UInt64.max, using: &g) >> UInt64.random(in: 0...63, using: &g) }
        switch Int.random(in: 0..<(depth > 0 ? 8 : 6), using: &g) {
        case 0: return .unsigned(number())
        case 1: return .negative(number())
        case 2: return .bytes((0..<[0, 1, 23, 24, 255, 256, 300].randomElement(using: &g)!).map { _ in UInt8.random(in: 0...255, using: &g) })
        case 3: return .text(["", "a", "fmt", "attStmt", "ü✓😀", String(repeating: "x", count: 300)].randomElement(using: &g)!)
        case 4: return .bool(Bool.random(using: &g))
        case 5: return .null
        case 6: return .array((0..<Int.random(in: 0...25, using: &g)).map { _ in random(depth: depth - 1, &g) })
        default:
            return .map((0..<Int.random(in: 0...25, using: &g)).map { _ in (random(depth: depth - 1, &g), random(depth: depth - 1, &g)) })
        }
    }

    @Test func randomValuesEncodeAsLibcborEncodesThem() {
        var g = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let value = Self.random(depth: 3, &g)
            #expect(value.encoded() == Self.libcborEncoded(value))
        }
    }

    @Test(arguments: COSEAlgorithm.allCases)
    func keysAndAttestationObjectsEncodeAsLibcborEncodesThem(_ algorithm: COSEAlgorithm) throws {
        let key = try PrivateKey.generate(algorithm)
        #expect(key.publicKey.cbor.encoded() == Self.libcborEncoded(key.publicKey.cbor))
        let object = try AttestationObject.packedSelf(authenticatorData: [1, 2, 3], clientDataHash: [4], key: key)
        let expected = Self.libcborEncoded(.map([(.text("fmt"), .text("packed")), (.text("attStmt"), object.statement),
                                                 (.text("authData"), .bytes([1, 2, 3]))]))
        #expect(object.bytes == expected)
    }
}
