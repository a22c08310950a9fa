import KeyVault

/// The account's devices as every operation looks them up — all records in order, the current
/// ones, by id and by name — decoded once and then kept in step with each device record that
/// changes (``Vault/derived(_:_:following:)``): adding the N-th device decodes one record and
/// updates a few tables, so adding N devices costs N, not N².
struct DeviceDirectory {
    /// Every device record, removed devices too: the first (the settings record) first, then the
    /// others in the order they were added.
    private(set) var every: [DeviceRecord] = []
    /// The devices not removed, in the same order.
    private(set) var current: [DeviceRecord] = []
    private var everyPosition: [[UInt8]: Int] = [:]
    private var currentPosition: [[UInt8]: Int] = [:]
    private var currentByName: [String: Int] = [:]
    /// The names of ``current``, in its order.
    private(set) var currentNames: [String] = []
    /// What a device view's schedule reads of each of ``every`` (``ViewSchedule/fields(of:)``),
    /// in its order: read when a record comes in, not at every view asked for.
    private(set) var scheduleFields: [[[UInt8]?]] = []

    init(_ devices: [DeviceRecord]) {
        for device in devices { append(device) }
    }

    func device(id: [UInt8]) -> DeviceRecord? { everyPosition[id].map { every[$0] } }

    /// ``ViewSchedule/fields(of:)`` of `device`: the kept ones when the directory holds this
    /// version of its record (a record's version rises at every change), else read from it.
    func scheduleFields(of device: DeviceRecord) -> [[UInt8]?] {
        if let position = everyPosition[device.id], every[position].record.version == device.record.version,
           every[position].record.kind == device.record.kind {
            return scheduleFields[position]
        }
        return ViewSchedule.fields(of: device)
    }

    func currentDevice(named name: String) -> DeviceRecord? { currentByName[name].map { current[$0] } }

    private mutating func append(_ device: DeviceRecord) {
        everyPosition[device.id] = every.count
        every.append(device)
        scheduleFields.append(ViewSchedule.fields(of: device))
        guard device.removedAt == nil else { return }
        currentPosition[device.id] = current.count
        currentByName[device.name] = current.count
        current.append(device)
        currentNames.append(device.name)
    }

    /// The directory of `vault`, derived once and followed from then on.
    static func of(_ vault: Vault) throws(VaultError) -> DeviceDirectory {
        try vault.derived("DeviceDirectory", { () throws(VaultError) in DeviceDirectory(try decode(vault)) }, following: { $0.follow($1) })
    }

    private static func decode(_ vault: Vault) throws(VaultError) -> [DeviceRecord] {
        let settings = try vault.records(kind: .settings)
        guard settings.count == 1 else {
            throw VaultError(.corrupted, "the vault has \(settings.count) settings records; it must have exactly one")
        }
        var out = [try DeviceRecord(settings[0])]
        for record in try vault.records(kind: .device) { out.append(try DeviceRecord(record)) }
        return out
    }

    /// Brings the directory in step with `record`, which changed: a new version of a device takes
    /// its place, a new device comes last (the vault orders records by when their id became live),
    /// a record of another kind changes nothing. `false` — decode afresh, where any error is
    /// thrown — for what it does not follow: a new settings record, an undecodable or renamed
    /// device, one removed or back, a device record turned into a tombstone or another kind.
    mutating func follow(_ record: VaultRecord) -> Bool {
        let position = everyPosition[record.id]
        guard record.kind == .device || record.kind == .settings else { return position == nil }
        guard let decoded = try? DeviceRecord(record) else { return false }
        guard let position else {
            guard record.kind == .device, decoded.removedAt == nil, currentByName[decoded.name] == nil else { return false }
            append(decoded)
            return true
        }
        let old = every[position]
        guard old.record.kind == record.kind, old.name == decoded.name, (old.removedAt == nil) == (decoded.removedAt == nil) else {
            return false
        }
        every[position] = decoded
        scheduleFields[position] = ViewSchedule.fields(of: decoded)
        if let index = currentPosition[record.id] { current[index] = decoded }
        return true
    }
}
