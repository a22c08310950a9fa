import Foundation

/// A stand-in for CryptoKit's `SymmetricKey`, the type Apple gives PRF outputs: CryptoKit is not
/// on Linux, and this module depends on nothing outside authctl. It has what app code does with
/// a PRF output — its size, its bytes (`withUnsafeBytes`, or any `ContiguousBytes` use), a key
/// made from bytes, and a comparison that takes the same time whatever the bytes — and none of
/// CryptoKit's algorithms (HKDF, AES.GCM, HMAC take CryptoKit's own type). Code that names the
/// type `CryptoKit.SymmetricKey` must drop the module name (docs/ios.md).
public struct SymmetricKey: ContiguousBytes, Sendable {
    private let bytes: [UInt8]

    /// A key of the given bytes.
    public init<D: ContiguousBytes>(data: D) {
        bytes = data.withUnsafeBytes { Array($0) }
    }

    /// The key's size in bits (256 for a PRF output).
    public var bitCount: Int { bytes.count * 8 }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes(body)
    }
}

extension SymmetricKey: Equatable {
    /// Keys are equal when their bytes are, compared in a time that depends on their lengths only.
    public static func == (lhs: SymmetricKey, rhs: SymmetricKey) -> Bool {
        guard lhs.bytes.count == rhs.bytes.count else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(lhs.bytes, rhs.bytes) { difference |= a ^ b }
        return difference == 0
    }
}
