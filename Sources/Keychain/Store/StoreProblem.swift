@_spi(ByteOrder) import ByteOrder
import KeyVault

/// Something a device found the account store doing that it must not — going back in time,
/// losing or altering what a vault uploaded, dropping or adding a part of a snapshot, holding
/// metadata that does not open — with when it was found, and when it healed (docs/sync.md, "What
/// the devices check"). `sync status` lists the open ones and the latest healed.
public struct StoreProblem: Encodable, Sendable, Equatable {
    public enum Kind: String, Encodable, Sendable, CaseIterable {
        /// The store went back: a change read before is gone or another at its sequence, the
        /// cursor past its end, an upload or metadata value older than one read before.
        case rolledBack
        /// Two different uploads at one place in a vault's chain.
        case forked
        /// Uploads a vault made (by its chain, or by what it published) that the store does not hold.
        case missing
        /// An upload read before, given again, or given after a later one.
        case replayed
        /// A snapshot part missing, altered or not listed; a snapshot that lists none.
        case snapshot
        /// The device directory, the sync settings or a repair request that does not open.
        case metadata

        var code: UInt8 { UInt8(Self.allCases.firstIndex(of: self)!) }
    }

    /// How it heals.
    enum Remedy: UInt8, Equatable, Sendable {
        /// Nothing to give back: what the store did was seen and passed over.
        case noted = 0
        /// This vault uploads again what the store lost of its own.
        case reupload = 1
        /// Every vault of the account reads the store again and uploads what it lacks of its own
        /// (``RepairRequest``).
        case repair = 2
        /// This vault publishes the value again.
        case republish = 3
    }

    public let kind: Kind
    public let message: String
    /// When it was found (Unix ms).
    public let detectedAt: UInt64
    /// When it healed (Unix ms); `nil` while it is open.
    public internal(set) var healedAt: UInt64?
    let remedy: Remedy
    /// The repair request it waits for (``Remedy/repair``).
    let repair: [UInt8]
    /// The store sequence it was found at (0: not one): a repair request asked when the store's
    /// head was at or past it covers it.
    let location: UInt64

    private enum CodingKeys: String, CodingKey { case kind, message, detectedAt, healedAt }

    /// `healedAt` is `null` while it is open, never absent.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        try container.encode(message, forKey: .message)
        try container.encode(detectedAt, forKey: .detectedAt)
        try container.encode(healedAt, forKey: .healedAt)
    }

    init(_ kind: Kind, _ message: String, at time: UInt64, remedy: Remedy, repair: [UInt8] = [], location: UInt64 = 0) {
        self.kind = kind
        self.message = message
        detectedAt = time
        healedAt = remedy == .noted ? time : nil
        self.remedy = remedy
        self.repair = repair
        self.location = location
    }

    public var isOpen: Bool { healedAt == nil }

    /// The same problem, waiting for repair request `id`.
    func waiting(for id: [UInt8]) -> StoreProblem {
        var out = StoreProblem(kind, message, at: detectedAt, remedy: remedy, repair: id, location: location)
        out.healedAt = healedAt
        return out
    }

    /// How many healed ones a vault keeps (the newest), and how many open ones.
    static let healedKept = 8, openKept = 32

    // kind u8 ‖ remedy u8 ‖ detected u64 ‖ healed u64 (0: open) ‖ location u64 ‖ repair length u8 ‖ repair ‖
    // message length u16 ‖ message
    static func bytes(_ problems: [StoreProblem]) -> [UInt8] {
        var out = [UInt8]()
        for p in problems {
            let message = Array(p.message.utf8.prefix(2048))
            out += [p.kind.code, p.remedy.rawValue] + BigEndianBytes.of(p.detectedAt) + BigEndianBytes.of(p.healedAt ?? 0)
            out += BigEndianBytes.of(p.location)
            out += [UInt8(p.repair.count)] + p.repair + BigEndianBytes.of(UInt16(message.count)) + message
        }
        return out
    }

    static func list(_ bytes: [UInt8]) throws(VaultError) -> [StoreProblem] {
        var reader = FieldReader(bytes)
        var out = [StoreProblem]()
        while !reader.atEnd {
            guard let head = reader.take(26), let repairCount = reader.take(1), let repair = reader.take(Int(repairCount[0])),
                  let messageCount = reader.take(2), let message = reader.take(Int(BigEndianBytes.integer(messageCount) as UInt16)),
                  Int(head[0]) < Kind.allCases.count, let remedy = Remedy(rawValue: head[1])
            else { throw VaultError(.corrupted, "the vault's sync state has a damaged list of store problems") }
            var problem = StoreProblem(Kind.allCases[Int(head[0])], String(decoding: message, as: UTF8.self),
                                       at: BigEndianBytes.integer(head[2..<10]), remedy: remedy, repair: repair,
                                       location: BigEndianBytes.integer(head[18..<26]))
            let healed: UInt64 = BigEndianBytes.integer(head[10..<18])
            problem.healedAt = healed == 0 ? nil : healed
            out.append(problem)
        }
        return out
    }
}
