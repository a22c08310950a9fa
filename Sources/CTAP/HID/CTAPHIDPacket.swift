/// One HID report of the CTAPHID framing (CTAP 2.1 §11.2.4): 64 bytes, an initialization packet
/// (CID, CMD with its top bit set, BCNT, the first 57 bytes of the message) or a continuation
/// packet (CID, SEQ 0…0x7F, the next 59). Unused bytes are zero when sent and ignored when read.
public enum CTAPHIDPacket: Equatable, Sendable {
    case initialization(channel: UInt32, command: UInt8, length: Int, data: ArraySlice<UInt8>)
    case continuation(channel: UInt32, sequence: UInt8, data: ArraySlice<UInt8>)

    /// The report size of a full-speed USB key, and the only one this framing reads or writes.
    public static let reportSize = 64
    /// The message bytes an initialization packet carries (64 − CID 4 − CMD 1 − BCNT 2).
    public static let initializationData = 57
    /// The message bytes a continuation packet carries (64 − CID 4 − SEQ 1).
    public static let continuationData = 59
    /// The longest message 64-byte reports can carry: one initialization packet and 128
    /// continuation packets (SEQ 0…0x7F).
    public static let longestMessage = initializationData + 128 * continuationData
    /// The channel every client may send CTAPHID_INIT on, to be given one of its own.
    public static let broadcastChannel: UInt32 = 0xFFFF_FFFF

    /// The packet a report holds; `nil` for a report that is not 64 bytes.
    public init?(_ report: [UInt8]) {
        guard report.count == Self.reportSize else { return nil }
        let channel = UInt32(report[0]) << 24 | UInt32(report[1]) << 16 | UInt32(report[2]) << 8 | UInt32(report[3])
        if report[4] & 0x80 != 0 {
            self = .initialization(channel: channel, command: report[4] & 0x7F, length: Int(report[5]) << 8 | Int(report[6]),
                                   data: report[7...])
        } else {
            self = .continuation(channel: channel, sequence: report[4], data: report[5...])
        }
    }

    public var channel: UInt32 {
        switch self {
        case .initialization(let channel, _, _, _), .continuation(let channel, _, _): channel
        }
    }

    /// The reports that carry `payload` (at most ``longestMessage`` bytes) as `command` on `channel`.
    public static func reports(channel: UInt32, command: UInt8, payload: [UInt8]) -> [[UInt8]] {
        precondition(payload.count <= longestMessage, "a CTAPHID message is at most \(longestMessage) bytes")
        let id: [UInt8] = [UInt8(channel >> 24), UInt8(channel >> 16 & 0xFF), UInt8(channel >> 8 & 0xFF), UInt8(channel & 0xFF)]
        func padded(_ bytes: [UInt8]) -> [UInt8] { bytes + [UInt8](repeating: 0, count: reportSize - bytes.count) }
        var reports = [padded(id + [0x80 | command, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
                              + payload.prefix(initializationData))]
        var offset = min(payload.count, initializationData), sequence: UInt8 = 0
        while offset < payload.count {
            let end = min(payload.count, offset + continuationData)
            reports.append(padded(id + [sequence] + payload[offset..<end]))
            offset = end
            sequence += 1
        }
        return reports
    }
}
