import CSodium
#if canImport(Glibc)
import Glibc
#endif

/// Secret bytes in memory the vault owns: allocated with `sodium_malloc` (guard pages, locked
/// against swapping where the system allows), wiped and freed in `deinit`. Never copied into a
/// Swift `Array` or `String`; callers borrow them through ``withUnsafeBytes(_:)``.
///
/// A class, not a `~Copyable` struct: a secret is shared by reference (the PIN source a caller
/// hands the device captures one in a closure, which a non-copyable value cannot be), and copying
/// the reference never copies the bytes. Not `Sendable`: its bytes can be changed in place.
public final class SecureBytes: Equatable {
    private let base: UnsafeMutableRawPointer
    public let count: Int
    public let allocation: Allocation

    /// How the bytes are held.
    public enum Allocation: Sendable {
        /// `sodium_malloc`: guard pages around the bytes, locked against swapping. For secrets
        /// that live as long as the vault is open (its key, a PIN).
        case guarded
        /// `malloc`, wiped with `sodium_memzero` before it is freed: for a secret that lives for
        /// one operation (a passkey's private key while it signs), where the three system calls of
        /// a guarded allocation and its release cost more than the signature.
        case transient
    }

    public init(count: Int, allocation: Allocation = .guarded) {
        Sodium.initialize()
        let p = switch allocation {
        case .guarded: sodium_malloc(max(count, 1))
        case .transient: malloc(max(count, 1))
        }
        guard let p else { fatalError("could not allocate \(count) bytes for a secret") }
        base = p
        self.count = count
        self.allocation = allocation
        sodium_memzero(base, max(count, 1))
    }

    /// Copies `bytes` in; the caller remains responsible for wiping its own copy.
    public convenience init(copying bytes: UnsafeRawBufferPointer) {
        self.init(count: bytes.count)
        if let src = bytes.baseAddress, bytes.count > 0 { base.copyMemory(from: src, byteCount: bytes.count) }
    }

    /// Takes a Swift array's contents and wipes that array.
    public convenience init(consuming bytes: inout [UInt8]) {
        self.init(count: bytes.count)
        bytes.withUnsafeMutableBytes { b in
            if let src = b.baseAddress, b.count > 0 { base.copyMemory(from: src, byteCount: b.count) }
            sodium_memzero(b.baseAddress, b.count)
        }
    }

    deinit {
        switch allocation {
        case .guarded: sodium_free(base)  // sodium_free wipes before freeing
        case .transient:
            sodium_memzero(base, max(count, 1))
            free(base)
        }
    }

    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    public func withUnsafeMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeMutableRawBufferPointer(start: base, count: count))
    }

    /// A new buffer holding the first `length` bytes.
    package func prefix(_ length: Int) -> SecureBytes {
        let out = SecureBytes(count: min(length, count), allocation: allocation)
        out.base.copyMemory(from: base, byteCount: out.count)
        return out
    }

    /// Equal contents, compared in constant time (`sodium_memcmp`): how long it takes says nothing
    /// of where two secrets differ. Lengths are not secret.
    public static func == (a: SecureBytes, b: SecureBytes) -> Bool {
        a.count == b.count && sodium_memcmp(a.base, b.base, a.count) == 0
    }
}
