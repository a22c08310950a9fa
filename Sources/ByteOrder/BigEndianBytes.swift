/// Big-endian integers, the byte order of every fixed-width number authctl lays out: WebAuthn's
/// and the TPM's structures, the vault's files, the store's files and objects, the keychain's
/// fields. A module of its own below all of them, so that VirtualAuthenticator, KeyVault and
/// SyncStore share it without importing each other. `@inlinable`, so that each caller gets it
/// specialized for its integer type: the vault's decoders read several for every record.
package enum BigEndianBytes {
    /// The bytes of `value`, most significant first.
    @inlinable
    package static func of<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian, Array.init)
    }

    /// `bytes` read as an unsigned big-endian integer; the caller has checked their number.
    @inlinable
    package static func integer<T: FixedWidthInteger>(_ bytes: some Collection<UInt8>) -> T {
        var value = T(0)
        for byte in bytes { value = value << 8 | T(truncatingIfNeeded: byte) }
        return value
    }

    /// The same for the slices records hold, read in place rather than through a generic
    /// collection.
    @inlinable
    package static func integer<T: FixedWidthInteger>(_ bytes: ArraySlice<UInt8>) -> T {
        bytes.withUnsafeBufferPointer { buffer in
            var value = T(0)
            for byte in buffer { value = value << 8 | T(truncatingIfNeeded: byte) }
            return value
        }
    }
}
