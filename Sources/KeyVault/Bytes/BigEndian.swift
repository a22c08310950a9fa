/// Big-endian integers, the byte order of every number in the vault's files. (VirtualAuthenticator
/// has its own three lines for WebAuthn's layouts: the two modules share no module to put them in,
/// and should not, as they share no format.)
enum BigEndian {
    /// `bytes` read as an unsigned big-endian integer; the caller has checked their number.
    static func integer<T: FixedWidthInteger>(_ bytes: some Collection<UInt8>) -> T {
        var value = T(0)
        for byte in bytes { value = value << 8 | T(truncatingIfNeeded: byte) }
        return value
    }

    /// The same for the slices records hold, without going through a generic collection (every
    /// revision read decodes several of these).
    static func integer<T: FixedWidthInteger>(_ bytes: ArraySlice<UInt8>) -> T {
        bytes.withUnsafeBufferPointer { buffer in
            var value = T(0)
            for byte in buffer { value = value << 8 | T(truncatingIfNeeded: byte) }
            return value
        }
    }

    static func bytes<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian, Array.init)
    }
}
