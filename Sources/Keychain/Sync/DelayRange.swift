@_spi(ByteOrder) import ByteOrder

/// How long an upload or a download takes: a fixed time, or a range from which each transfer's
/// delay is drawn with the account's seeded generator. Written as people write durations:
/// `250ms`, `30s`, `2m`, `1h`, `1.5s`, compound `48h5m`, and ranges `1s..5s`.
public struct DelayRange: Equatable, Sendable, CustomStringConvertible {
    /// Milliseconds, inclusive.
    public let lower: UInt64
    public let upper: UInt64

    public init(lower: UInt64, upper: UInt64) {
        precondition(lower <= upper)
        self.lower = lower
        self.upper = upper
    }

    public static let none = DelayRange(lower: 0, upper: 0)

    /// The longest delay: 10¹⁵ ms, some 31,700 years.
    public static let maximum: UInt64 = 1_000_000_000_000_000

    /// Parses `2s` or `1s..5s`; `nil` when it is neither.
    public init?(parsing text: String) {
        let parts = text.split(separator: "..", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let lower = Self.milliseconds(parts[0]),
              let upper = parts.count == 2 ? Self.milliseconds(parts[1]) : lower, lower <= upper
        else { return nil }
        self.init(lower: lower, upper: upper)
    }

    /// A duration in milliseconds: a decimal number and a unit (`ms`, `s`, `m`, `h`), or several,
    /// larger units first, each once (`48h5m`, `1m30s`, `2s500ms`, `1h0.5m`).
    package static func milliseconds(_ text: some StringProtocol) -> UInt64? {
        // The form a generated scenario writes at every step (`at 123456ms`): up to 15 digits and
        // "ms", read as an integer — what the general path below gives it (a Double holds every
        // such number exactly), without its Character-by-Character walk.
        if let whole = wholeMilliseconds(text.utf8) { return whole }
        // "ms" before "m", so that `5ms` is not 5 minutes followed by an `s`.
        let units: [(name: String, scale: Double, rank: Int)] = [("ms", 1, 0), ("h", 3_600_000, 3), ("m", 60_000, 2), ("s", 1000, 1)]
        var rest = Substring(text), total = 0.0, previous = Int.max
        repeat {
            let number = rest.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
            guard !number.isEmpty, number.filter({ $0 == "." }).count <= 1, let value = Double(number) else { return nil }
            rest = rest.dropFirst(number.count)
            guard let unit = units.first(where: { rest.hasPrefix($0.name) }), unit.rank < previous else { return nil }
            rest = rest.dropFirst(unit.name.count)
            previous = unit.rank
            total += value * unit.scale
        } while !rest.isEmpty
        let ms = total.rounded()
        guard ms >= 0, ms <= Double(maximum) else { return nil }
        return UInt64(ms)
    }

    /// `digits` ‖ "ms" with 1 to 15 ASCII digits: their value; `nil` for anything else.
    private static func wholeMilliseconds(_ utf8: some Collection<UInt8>) -> UInt64? {
        let count = utf8.count
        guard count >= 3, count <= 17 else { return nil }
        var value: UInt64 = 0
        var index = utf8.startIndex
        for _ in 0..<(count - 2) {
            let byte = utf8[index]
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            value = value * 10 + UInt64(byte - 0x30)
            index = utf8.index(after: index)
        }
        guard utf8[index] == 0x6D, utf8[utf8.index(after: index)] == 0x73 else { return nil }  // "ms"
        return value
    }

    /// Text that parses back to the same value: `0s`, `250ms`, `2.5s`, `90s`, `2m`, `1h`.
    package static func text(milliseconds ms: UInt64) -> String {
        if ms == 0 { return "0s" }
        if ms < 1000 { return "\(ms)ms" }
        if ms % 1000 != 0 {
            var text = "\(ms / 1000).\(String(1000 + ms % 1000).dropFirst())"
            while text.hasSuffix("0") { text.removeLast() }
            return text + "s"
        }
        if ms % 3_600_000 == 0 { return "\(ms / 3_600_000)h" }
        if ms % 60_000 == 0 { return "\(ms / 60_000)m" }
        return "\(ms / 1000)s"
    }

    public var description: String {
        lower == upper ? Self.text(milliseconds: lower) : Self.text(milliseconds: lower) + ".." + Self.text(milliseconds: upper)
    }

    /// 16 bytes, big-endian lower and upper, as a vault field holds it.
    var bytes: [UInt8] { BigEndianBytes.of(lower) + BigEndianBytes.of(upper) }

    init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        let array = Array(bytes)
        let lower: UInt64 = BigEndianBytes.integer(array[0..<8]), upper: UInt64 = BigEndianBytes.integer(array[8..<16])
        guard lower <= upper, upper <= Self.maximum else { return nil }
        self.init(lower: lower, upper: upper)
    }
}
