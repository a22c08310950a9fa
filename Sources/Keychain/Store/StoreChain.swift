@_spi(ByteOrder) import ByteOrder
import KeyVault
import SyncStore
import VirtualAuthenticator

/// The account store only orders and keeps what devices upload; it can delay, drop, replay,
/// reorder and roll back, and cannot read or forge (everything is sealed under the account key).
/// So every vault numbers its own uploads, and each upload names — sealed inside it — the upload
/// of the same vault it follows, by number and digest: a chain per vault that only that vault
/// writes, and that any device can check with what it has read before. A gap, a fork (two uploads
/// at one place), a replay or a chain that goes back is then seen, never taken in silence
/// (docs/sync.md, "What the devices check").

/// A place in one vault's chain of uploads: the upload's number (1, 2, …; 0 is the start, before
/// any) and the digest of the object the store held there.
struct ChainPosition: Equatable, Sendable {
    let index: UInt64
    let digest: [UInt8]

    static let start = ChainPosition(index: 0, digest: [UInt8](repeating: 0, count: 32))

    /// 40 bytes: index u64 ‖ digest (32).
    var bytes: [UInt8] { BigEndianBytes.of(index) + digest }

    init(index: UInt64, digest: [UInt8]) {
        self.index = index
        self.digest = digest
    }

    init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 40 else { return nil }
        let array = Array(bytes)
        self.init(index: BigEndianBytes.integer(array[0..<8]), digest: Array(array[8...]))
    }

    /// What a device that read `object` holds of it: SHA-256 over the object's id and sealed bytes,
    /// exactly as the store gave them.
    static func digest(of object: StoreObject) -> [UInt8] {
        SHA256.hash(Array("AUTHCTL-LINK".utf8) + [UInt8(object.id.count)] + object.id + object.bytes)
    }
}

/// What an upload says of its place, sealed inside it: the vault that made it, its number, and the
/// upload it follows (normally the one numbered just before it). An upload that follows an older
/// one **restates** what the uploads between held: its vault found them gone from the store and
/// uploaded again what the store lacked of its own.
struct UploadLink: Equatable, Sendable {
    let vault: [UInt8]
    let index: UInt64
    let previous: ChainPosition

    /// 64 bytes: vault (16) ‖ index u64 ‖ previous (40).
    var bytes: [UInt8] { vault + BigEndianBytes.of(index) + previous.bytes }

    static let size = 64

    init(vault: [UInt8], index: UInt64, previous: ChainPosition) {
        self.vault = vault
        self.index = index
        self.previous = previous
    }

    init?(bytes: some Collection<UInt8>) {
        guard bytes.count == Self.size else { return nil }
        let array = Array(bytes)
        guard let previous = ChainPosition(bytes: array[24...]) else { return nil }
        self.init(vault: Array(array[0..<16]), index: BigEndianBytes.integer(array[16..<24]), previous: previous)
        guard self.previous.index < index else { return nil }
    }

    /// Whether it restates uploads of its vault the store lost (it follows an older one than the last).
    var restates: Bool { previous.index + 1 < index }
}

/// How far this vault has read each vault's chain: the newest upload of each, by number and digest.
struct StoreChains: Equatable {
    var heads: [[UInt8]: ChainPosition] = [:]

    func head(of vault: [UInt8]) -> ChainPosition { heads[vault] ?? .start }

    /// What reading `link` (an upload whose object has `digest`) after what was read before says:
    /// `nil` when it follows on; else what is wrong. The upload is taken as the vault's newest
    /// either way, so one problem is reported once, and what follows it is checked against it.
    mutating func follow(_ link: UploadLink, digest: [UInt8]) -> ChainBreak? {
        let known = head(of: link.vault)
        defer { if link.index >= known.index { heads[link.vault] = ChainPosition(index: link.index, digest: digest) } }
        if link.index <= known.index {
            if link.index == known.index && digest == known.digest { return .replayed(index: link.index) }
            return link.index == known.index ? .forked(index: link.index) : .behind(index: link.index, read: known.index)
        }
        if known.index == link.previous.index {
            return known.digest == link.previous.digest ? nil : .forked(index: link.previous.index)
        }
        if known.index > link.previous.index {
            // It restates uploads this vault had read: its maker found them gone from the store.
            return link.restates ? nil : .forked(index: link.previous.index)
        }
        return .missing(known.index + 1 ... link.previous.index)
    }
}

/// What was wrong with one vault's chain as read.
enum ChainBreak: Equatable {
    /// Its uploads numbered so were never read, though a later one follows them.
    case missing(ClosedRange<UInt64>)
    /// Two different uploads at one place in its chain (or one that follows another than the one read).
    case forked(index: UInt64)
    /// An upload read before, given again.
    case replayed(index: UInt64)
    /// An upload older than one read before, given after it (reordered, or a chain gone back).
    case behind(index: UInt64, read: UInt64)
}

/// The change a vault's cursor is at, as it read it: a store that still has the cursor's sequence
/// must give the same change there, or it went back in time (rolled back and written again, or
/// its changes renumbered) and what the vault read after that sequence is no longer what it holds.
struct ChainAnchor: Equatable, Sendable {
    let sequence: UInt64
    let digest: [UInt8]

    static let none = ChainAnchor(sequence: 0, digest: [])

    var bytes: [UInt8] { BigEndianBytes.of(sequence) + digest }

    init(sequence: UInt64, digest: [UInt8]) {
        self.sequence = sequence
        self.digest = digest
    }

    init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 40 else { return nil }
        let array = Array(bytes)
        self.init(sequence: BigEndianBytes.integer(array[0..<8]), digest: Array(array[8...]))
    }
}
