@_spi(ByteOrder) import ByteOrder
import KeyVault

/// A moment in the account's history: milliseconds since the epoch and, to order what happens in
/// one millisecond, the vault position it was written at (``Vault/position``: writes are totally
/// ordered). A transfer that ends after a delay ends at `order` 0 of its millisecond, before
/// anything written in it. Scenarios do many things in one virtual millisecond; this is how a
/// device that goes offline just after receiving a passkey keeps it, and one that goes offline
/// just before does not get it.
struct Instant: Comparable, Hashable, Sendable, CustomStringConvertible {
    let ms: UInt64
    let order: UInt64

    init(ms: UInt64, order: UInt64) {
        self.ms = ms
        self.order = order
    }

    static let zero = Instant(ms: 0, order: 0)

    /// Everything written by the end of millisecond `ms`: how "now" compares.
    static func endOf(_ ms: UInt64) -> Instant { Instant(ms: ms, order: .max) }

    static func < (a: Instant, b: Instant) -> Bool { (a.ms, a.order) < (b.ms, b.order) }

    /// `delay` milliseconds later: the same instant for no delay, else the start of that millisecond.
    func after(_ delay: UInt64) -> Instant {
        delay == 0 ? self : Instant(ms: ms > UInt64.max - delay ? UInt64.max : ms + delay, order: 0)
    }

    var description: String { "\(ms).\(order)" }

    /// 16 bytes: ms ‖ order, big-endian.
    var bytes: [UInt8] { BigEndianBytes.of(ms) + BigEndianBytes.of(order) }

    init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        let array = Array(bytes)
        self.init(ms: BigEndianBytes.integer(array[0..<8]), order: BigEndianBytes.integer(array[8..<16]))
    }
}
