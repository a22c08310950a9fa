/// Big-endian integers, the byte order of every number in the vault's files. (VirtualAuthenticator
/// has its own three lines for WebAuthn's layouts: the two modules share no module to put them in,
/// and should not, as they share no format.)
enum BigEndian {
    /// `bytes` read as an unsigned big-endian integer; the caller has checked their number.
    static func integer<T: FixedWidthInteger>(_ bytes: some Collection<UInt8>) -> T {
        bytes.reduce(T(0)) { $0 << 8 | T($1) }
    }

    static func bytes<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian, Array.init)
    }
}
