/// Big-endian integers, the byte order of every fixed-width number authctl lays out: WebAuthn's
/// and the TPM's structures, the vault's files, the store's files and objects, the keychain's
/// fields. A module of its own below all of them, so that VirtualAuthenticator, KeyVault and
/// SyncStore share it without importing each other.
///
/// Each caller must get these specialized for its integer type, inlined, as a copy of its own
/// was: the vault's decoders read several for every record, and a generic call that shifts each
/// byte through witness tables made opening a vault three times as slow. Swift inlines a function
/// of another module only when it is `public` and `@inlinable` (a `package` one stays a generic
/// call), so this is public under an SPI name: what `@_spi(ByteOrder) import ByteOrder` reaches,
/// not the listed API (scripts/check-api.sh leaves SPI out), and nothing another package is offered.
@_spi(ByteOrder)
public enum BigEndianBytes {
    /// The bytes of `value`, most significant first.
    @inlinable
    public static func of<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian, Array.init)
    }

    /// `bytes` read as an unsigned big-endian integer; the caller has checked their number.
    @inlinable
    public static func integer<T: FixedWidthInteger>(_ bytes: some Collection<UInt8>) -> T {
        var value = T(0)
        for byte in bytes { value = value << 8 | T(truncatingIfNeeded: byte) }
        return value
    }

    /// The same for the slices records hold, read in place rather than through a generic
    /// collection.
    @inlinable
    public static func integer<T: FixedWidthInteger>(_ bytes: ArraySlice<UInt8>) -> T {
        bytes.withUnsafeBufferPointer { buffer in
            var value = T(0)
            for byte in buffer { value = value << 8 | T(truncatingIfNeeded: byte) }
            return value
        }
    }
}
