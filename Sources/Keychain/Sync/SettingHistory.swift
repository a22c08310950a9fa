@_spi(ByteOrder) import ByteOrder

/// A sync setting over time — a delay, or the seed delays are drawn with: each change applies from
/// its moment on. A transfer takes the setting in force when it started, so changing a delay never
/// moves a transfer already under way, let alone one done (a passkey a device holds stays held).
///
/// As a vault field: one entry per change, `since (ms u64 ‖ order u64) ‖ value`, oldest first. A
/// field of just a value (from before histories) is one entry since the beginning.
struct SettingHistory<Value: SettingValue>: Equatable {
    struct Entry: Equatable {
        let since: Instant
        let value: Value
    }

    private(set) var entries: [Entry]

    init(_ entries: [Entry] = []) { self.entries = entries }

    /// The value in force at `time`; `nil` before the first change.
    func value(at time: Instant) -> Value? {
        entries.last(where: { $0.since <= time })?.value
    }

    var current: Value? { entries.last?.value }

    /// `value` from `time` on. A change at the same moment as earlier ones (or, on a clock set
    /// back, before them) replaces them.
    mutating func set(_ value: Value, from time: Instant) {
        entries.removeAll { $0.since >= time }
        if entries.last?.value != value { entries.append(Entry(since: time, value: value)) }
    }

    var bytes: [UInt8] { entries.flatMap { $0.since.bytes + $0.value.bytes } }

    /// `nil` when the field is malformed (a length that is no whole number of entries, times not
    /// ascending, a value that does not decode).
    init?(bytes: some Collection<UInt8>) {
        let array = Array(bytes)
        if array.count == Value.byteCount {
            guard let value = Value(bytes: array[...]) else { return nil }
            self.init([Entry(since: .zero, value: value)])
            return
        }
        let size = 16 + Value.byteCount
        guard array.count % size == 0 else { return nil }
        var entries = [Entry]()
        for start in stride(from: 0, to: array.count, by: size) {
            guard let since = Instant(bytes: array[start..<start + 16]), let value = Value(bytes: array[start + 16..<start + size]),
                  entries.last.map({ $0.since < since }) ?? true
            else { return nil }
            entries.append(Entry(since: since, value: value))
        }
        self.init(entries)
    }
}

/// What a ``SettingHistory`` can hold: a value of fixed width as a vault field.
protocol SettingValue: Equatable {
    static var byteCount: Int { get }
    var bytes: [UInt8] { get }
    init?(bytes: ArraySlice<UInt8>)
}

extension DelayRange: SettingValue {
    static var byteCount: Int { 16 }
}

/// The seed of the account's delay draws.
struct Seed: SettingValue {
    let value: UInt64
    static var byteCount: Int { 8 }
    var bytes: [UInt8] { BigEndianBytes.of(value) }
    init(_ value: UInt64) { self.value = value }
    init?(bytes: ArraySlice<UInt8>) {
        guard bytes.count == 8 else { return nil }
        value = BigEndianBytes.integer(bytes)
    }
}
