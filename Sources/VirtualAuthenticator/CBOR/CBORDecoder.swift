@_spi(ByteOrder) import ByteOrder
import CCBOR

extension CBORValue {
    package struct DecodingError: Error, Equatable, CustomStringConvertible {
        package let description: String
    }

    /// Decodes exactly one CBOR item that fills `bytes`; trailing bytes are an error.
    package static func decode(_ bytes: [UInt8]) throws(DecodingError) -> CBORValue {
        let (value, used) = try decodePrefix(bytes)
        guard used == bytes.count else {
            throw DecodingError(description: "\(bytes.count - used) trailing bytes after the CBOR item")
        }
        return value
    }

    /// Decodes the CBOR item at the start of `bytes`, returning it and the number of bytes it used.
    package static func decodePrefix(_ bytes: [UInt8]) throws(DecodingError) -> (CBORValue, Int) {
        // libcbor allocates what a header declares before reading the items; check first that
        // every declared length fits in the bytes there are (a 9-byte input must not ask for GBs).
        try checkWellFormed(bytes)
        var result = cbor_load_result()
        let item = bytes.withUnsafeBufferPointer { cbor_load($0.baseAddress, $0.count, &result) }
        guard let item else {
            throw DecodingError(description: "malformed CBOR at byte \(result.error.position)")
        }
        defer { var i: UnsafeMutablePointer<cbor_item_t>? = item; cbor_decref(&i) }
        return (try convert(item, depth: 0), result.read)
    }

    /// The well-formedness check of RFC 8949 Appendix C, limited to what authctl decodes: definite
    /// lengths only, nesting at most 16 deep, and no declared length larger than the bytes left.
    static func checkWellFormed(_ bytes: [UInt8]) throws(DecodingError) {
        var offset = 0
        func fail(_ why: String) -> DecodingError { DecodingError(description: "malformed CBOR at byte \(offset): \(why)") }
        func argument(_ info: UInt8) throws(DecodingError) -> UInt64 {
            switch info {
            case 0..<24: return UInt64(info)
            case 24...27:
                let size = 1 << Int(info - 24)
                guard bytes.count - offset >= size else { throw fail("truncated argument") }
                defer { offset += size }
                return BigEndianBytes.integer(bytes[offset..<offset + size])
            default: throw fail("indefinite length or reserved value")
            }
        }
        func item(depth: Int) throws(DecodingError) {
            guard depth <= 16 else { throw fail("nested too deeply") }
            guard offset < bytes.count else { throw fail("truncated") }
            let initial = bytes[offset]
            offset += 1
            let major = initial >> 5, info = initial & 0x1F
            if major == 7 {
                guard info < 24 || (25...27).contains(info) else { throw fail("unsupported simple value") }
                _ = try argument(info == 24 ? 28 : info)
                return
            }
            let n = try argument(info)
            switch major {
            case 2, 3:
                guard n <= UInt64(bytes.count - offset) else { throw fail("string longer than the input") }
                offset += Int(n)
            case 4, 5:
                // Every item takes at least one byte; a map entry two.
                let remaining = UInt64(bytes.count - offset)
                guard n <= remaining, major == 4 || n <= remaining / 2 else { throw fail("more items declared than bytes left") }
                for _ in 0..<(major == 5 ? 2 * n : n) { try item(depth: depth + 1) }
            case 6: try item(depth: depth + 1)
            default: break
            }
        }
        try item(depth: 0)
    }

    private static func convert(_ item: UnsafeMutablePointer<cbor_item_t>, depth: Int) throws(DecodingError) -> CBORValue {
        guard depth < 16 else { throw DecodingError(description: "CBOR nested too deeply") }
        switch cbor_typeof(item) {
        case CBOR_TYPE_UINT: return .unsigned(cbor_get_int(item))
        case CBOR_TYPE_NEGINT: return .negative(cbor_get_int(item))
        case CBOR_TYPE_BYTESTRING:
            guard cbor_bytestring_is_definite(item) else { throw DecodingError(description: "indefinite byte string") }
            return .bytes(Array(UnsafeBufferPointer(start: cbor_bytestring_handle(item), count: cbor_bytestring_length(item))))
        case CBOR_TYPE_STRING:
            guard cbor_string_is_definite(item) else { throw DecodingError(description: "indefinite text string") }
            let raw = Array(UnsafeBufferPointer(start: cbor_string_handle(item), count: cbor_string_length(item)))
            guard let text = String(validating: raw, as: UTF8.self) else {
                throw DecodingError(description: "text string is not UTF-8")
            }
            return .text(text)
        case CBOR_TYPE_ARRAY:
            guard let handle = cbor_array_handle(item) else { return .array([]) }
            var out = [CBORValue]()
            for i in 0..<cbor_array_size(item) {
                guard let child = handle[i] else { throw DecodingError(description: "missing array element") }
                out.append(try convert(child, depth: depth + 1))
            }
            return .array(out)
        case CBOR_TYPE_MAP:
            guard let handle = cbor_map_handle(item) else { return .map([]) }
            var out = [(CBORValue, CBORValue)]()
            for i in 0..<cbor_map_size(item) {
                guard let k = handle[i].key, let v = handle[i].value else {
                    throw DecodingError(description: "incomplete map entry")
                }
                out.append((try convert(k, depth: depth + 1), try convert(v, depth: depth + 1)))
            }
            return .map(out)
        case CBOR_TYPE_FLOAT_CTRL:
            // libcbor asserts when asked whether a float is a bool: check the width first.
            guard cbor_float_get_width(item) == CBOR_FLOAT_0 else {
                throw DecodingError(description: "floating-point numbers are not used in WebAuthn CBOR")
            }
            if cbor_is_bool(item) { return .bool(cbor_get_bool(item)) }
            if cbor_is_null(item) { return .null }
            throw DecodingError(description: "unsupported CBOR simple value or float")
        default:
            throw DecodingError(description: "unsupported CBOR type (tag)")
        }
    }
}
