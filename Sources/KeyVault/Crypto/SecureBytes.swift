import CSodium
#if canImport(Glibc)
import Glibc
#endif

/// Secret bytes in memory the vault owns: in guarded memory (guard pages, locked against swapping
/// where the system allows), wiped when released in `deinit`. Never copied into a Swift `Array` or
/// `String`; callers borrow them through ``withUnsafeBytes(_:)``.
///
/// A small secret (up to ``SecretSlabs/slotSize`` bytes: a key, a PIN, a P-256 private key's DER)
/// takes a slot of a slab of guarded memory set up once per process (``SecretSlabs``) rather than
/// a `sodium_malloc` of its own: a guarded allocation is an `mmap`, three `mprotect`s, an `mlock`
/// and their undoing at release, and each `munmap` and `mprotect` takes the process's memory-map
/// lock, so a server's threads making secrets for every request would take turns in the kernel.
///
/// A class, not a `~Copyable` struct: a secret is shared by reference (the PIN source a caller
/// hands the device captures one in a closure, which a non-copyable value cannot be), and copying
/// the reference never copies the bytes. Not `Sendable`: its bytes can be changed in place.
public final class SecureBytes: Equatable {
    private let base: UnsafeMutableRawPointer
    public let count: Int
    public let allocation: Allocation
    /// Whether the bytes are a slot of ``SecretSlabs`` (else their own allocation).
    private let slotted: Bool

    /// How the bytes are held.
    public enum Allocation: Sendable {
        /// Guarded memory: a slot of a guarded slab, or for a larger secret a `sodium_malloc` of
        /// its own (guard pages around the bytes, locked against swapping). For secrets that live
        /// as long as the vault is open (its key, a PIN).
        case guarded
        /// For a secret that lives for one operation (a passkey's private key while it signs): a
        /// slot of a guarded slab like ``guarded``, or for a larger one `malloc`, wiped with
        /// `sodium_memzero` before it is freed.
        case transient
    }

    public init(count: Int, allocation: Allocation = .guarded) {
        Sodium.initialize()
        let size = max(count, 1)
        if let slot = SecretSlabs.shared.take(size) {
            base = slot
            slotted = true
        } else {
            let p = switch allocation {
            case .guarded: sodium_malloc(size)
            case .transient: malloc(size)
            }
            guard let p else { fatalError("could not allocate \(count) bytes for a secret") }
            base = p
            slotted = false
        }
        self.count = count
        self.allocation = allocation
        sodium_memzero(base, size)
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
        if slotted {
            SecretSlabs.shared.give(base)  // wiped there
            return
        }
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

/// The process's guarded memory for small secrets: slabs of ``slabSize`` bytes, each one
/// `sodium_malloc` (guard pages before and after it, `mlock`ed, left out of core dumps), cut into
/// slots of ``slotSize`` bytes. A secret takes a free slot and gives it back wiped
/// (`sodium_memzero`) when released; a slab is made only when every slot is taken, and never
/// unmapped, so a process that makes and drops secrets at a steady rate stops calling the kernel
/// once it has as many slabs as it ever holds secrets at once. One lock guards the free list; it is
/// held for a pointer's push or pop, never across a system call but the rare new slab's.
///
/// What is given up against a `sodium_malloc` per secret: the guard pages are around a slab, not
/// around each secret, so an overrun of one secret's slot reaches the next one's rather than a
/// guard page (the bytes past the last slot still fault). The slots hold only the program's own
/// secrets, written through their known lengths.
final class SecretSlabs: @unchecked Sendable {
    static let shared = SecretSlabs()
    /// The largest secret a slot holds: a 32-byte key, a PIN (at most 256 bytes: SecretSource's
    /// limit), a P-256 private key's DER (138 bytes).
    static let slotSize = 272
    /// Sixteen pages (240 slots): a slab is whole pages, so `sodium_malloc` puts its start on a
    /// page boundary and every slot on a 16-byte one.
    static let slabSize = 16 * 4096

    private let lock: UnsafeMutablePointer<pthread_mutex_t>
    private var free: [UnsafeMutableRawPointer] = []
    private var slabs = 0

    private init() {
        lock = .allocate(capacity: 1)
        pthread_mutex_init(lock, nil)
        free.reserveCapacity(Self.slabSize / Self.slotSize * 4)
    }

    /// A free slot for `count` bytes, or `nil` when a slot is too small for them.
    func take(_ count: Int) -> UnsafeMutableRawPointer? {
        guard count <= Self.slotSize else { return nil }
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        if let slot = free.popLast() { return slot }
        guard let slab = sodium_malloc(Self.slabSize) else { return nil }  // the caller falls back to its own allocation
        slabs += 1
        let slots = Self.slabSize / Self.slotSize
        // The slots end where the slab does, so the bytes past the last one are the guard page; the
        // slack (slabSize mod slotSize, a multiple of 16) is before the first.
        let first = slab + (Self.slabSize - slots * Self.slotSize)
        // Slot 0 is handed out; the rest go on the free list, highest first, so the next taken is slot 1.
        for i in stride(from: slots - 1, through: 1, by: -1) { free.append(first + i * Self.slotSize) }
        return first
    }

    /// Wipes the slot and gives it back.
    func give(_ slot: UnsafeMutableRawPointer) {
        sodium_memzero(slot, Self.slotSize)
        pthread_mutex_lock(lock)
        free.append(slot)
        pthread_mutex_unlock(lock)
    }

    /// How many slabs the process made (a measure for tests).
    var slabCount: Int {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return slabs
    }
}
