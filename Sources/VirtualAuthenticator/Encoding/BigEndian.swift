/// Big-endian integers in WebAuthn's byte layouts (the sign count, the credential id length).
enum BigEndian {
    /// `bytes` read as an unsigned big-endian integer; the caller has checked their number.
    static func integer<T: FixedWidthInteger>(_ bytes: some Collection<UInt8>) -> T {
        bytes.reduce(T(0)) { $0 << 8 | T($1) }
    }

    static func bytes<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian, Array.init)
    }
}
