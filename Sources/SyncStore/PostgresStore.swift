#if canImport(Glibc)
import Glibc
#endif
@_spi(ByteOrder) import ByteOrder
import CPostgres

/// An ``AccountStore`` on a PostgreSQL server, reached with libpq: the store several machines
/// share. It holds what the directory store holds — sealed objects, a sequence the server gives,
/// a snapshot, versioned metadata — in five tables, every account of a database apart by name:
///
///     authctl_schema     the schema's version (authctl creates and migrates it, under a lock)
///     authctl_accounts   account, head, snapshot          one row per account: its counter
///     authctl_changes    account, sequence, id, bytes     the log after the snapshot
///     authctl_ids        account, id, sequence            every id ever given (idempotent re-upload)
///     authctl_snapshot   account, part, id, bytes         the parts that replaced the log
///     authctl_metadata   account, key, version, bytes     compare-and-swap values
///
/// Every call is one statement — a function of the schema's for those that write — so it costs
/// one round trip and is one transaction: an append takes the account's row lock, gives the next
/// sequences and moves the head in the same commit, so a reader (whose statement sees one
/// snapshot of the database) never sees a head past what it can read, and a client killed
/// mid-append leaves nothing. Appends and metadata changes `NOTIFY` the account's channel at
/// commit, which only wakes devices waiting (``waitForChange(timeout:)``): a notification is never
/// replayed, so the log, read by cursor, stays the change feed.
///
/// A server that cannot be reached (refused, timed out, partitioned, restarting, a lost
/// connection) makes the call `unavailable`; the next call connects again. The connection's
/// defaults — connect timeout 5 s, keepalives, TCP user timeout 10 s — bound how long a call
/// waits on a partition; the address's own parameters override them.
package final class PostgresStore: AccountStore, @unchecked Sendable {
    /// What the store was opened with.
    package let address: PostgresAddress
    /// The schema this build creates and reads.
    package static let schemaVersion: Int64 = 1

    /// The connection (nil: none yet, or dropped), used by one call at a time.
    private var connection: OpaquePointer?
    private var lock = pthread_mutex_t()
    private var channel = ""

    /// Opens the account `address` names; with `create`, makes the schema and the account when
    /// they do not exist yet. An account that does not exist, without `create`, is `unavailable`
    /// (a reader creates nothing).
    package init(address: PostgresAddress, create: Bool = true) throws(StoreError) {
        self.address = address
        pthread_mutex_init(&lock, nil)
        try withConnection { (c: OpaquePointer) throws(StoreError) in
            try self.prepare(c, create: create)
        }
    }

    /// Whether libpq can be loaded here (the reason when it cannot).
    package static var clientProblem: String? {
        authctl_pg_load() != 0 ? nil : "libpq (libpq5) cannot be loaded: \(String(cString: authctl_pg_load_error()))"
    }

    deinit {
        if let open = connection { authctl_pg_close(UnsafeMutableRawPointer(open)) }
        pthread_mutex_destroy(&lock)
    }

    // MARK: - AccountStore

    package func append(_ objects: [StoreObject]) throws(StoreError) -> [UInt64] {
        for object in objects { try StoreRules.check(object) }
        guard !objects.isEmpty else { return [] }
        var params: [Parameter] = [.text(address.account)]
        let (ids, bodies) = Self.arrays(of: objects, into: &params)
        let sql = "SELECT s FROM authctl_append($1::text, \(ids), \(bodies))"
            + " WITH ORDINALITY AS t(s, n) ORDER BY n"
        let rows = try query(sql, params)
        guard rows.count == objects.count else {
            throw StoreError(.corrupted, "the account store at \(address) gave \(rows.count) sequence(s) for \(objects.count) object(s)")
        }
        return try rows.map { row throws(StoreError) in try row.unsigned(0) }
    }

    package func changes(after cursor: UInt64, limit: Int) throws(StoreError) -> ChangePage {
        let last = cursor &+ UInt64(max(limit, 1))
        let rows = try query("""
            SELECT a.head, a.snapshot, c.sequence, c.id, c.bytes FROM authctl_accounts a
              LEFT JOIN authctl_changes c ON c.account = a.account AND c.sequence > $2::bigint AND c.sequence <= $3::bigint
             WHERE a.account = $1::text ORDER BY c.sequence
            """, [.text(address.account), .integer(cursor), .integer(min(last, UInt64(Int64.max)))])
        guard let first = rows.first else { throw missingAccount() }
        let head = try first.unsigned(0), snapshot = try first.unsigned(1)
        guard cursor <= head else {
            throw StoreError(.invalid, "cursor \(cursor) is past the account store's last change (\(head))")
        }
        guard cursor >= snapshot else {
            throw StoreError(.behindSnapshot(snapshot: snapshot), "the account store was compacted up to change \(snapshot), past cursor \(cursor)")
        }
        var changes = [StoreChange]()
        for row in rows where !row.isNull(2) {
            changes.append(StoreChange(sequence: try row.unsigned(2), object: StoreObject(id: row.bytes(3), bytes: row.bytes(4))))
        }
        let next = min(head, last)
        // Every sequence after the snapshot up to the head is a row: a gap is a change lost (its
        // row deleted), passed over as the directory store passes over a file that is gone — the
        // devices' checks name what it held.
        let given = Set(changes.map(\.sequence))
        let lost = cursor < next ? (cursor + 1...next).filter { !given.contains($0) } : []
        return ChangePage(changes: changes, unreadable: lost.map { UnreadableChange(sequence: $0, reason: "missing from the store") },
                          next: next, head: head)
    }

    package func snapshot() throws(StoreError) -> StoreSnapshot? {
        let rows = try query("""
            SELECT a.snapshot, s.id, s.bytes FROM authctl_accounts a
              LEFT JOIN authctl_snapshot s ON s.account = a.account WHERE a.account = $1::text ORDER BY s.part
            """, [.text(address.account)])
        guard let first = rows.first else { throw missingAccount() }
        let sequence = try first.unsigned(0)
        guard sequence > 0 else { return nil }
        return StoreSnapshot(sequence: sequence, parts: rows.filter { !$0.isNull(1) }.map { StoreObject(id: $0.bytes(1), bytes: $0.bytes(2)) })
    }

    package func compact(through sequence: UInt64, snapshot parts: [StoreObject]) throws(StoreError) {
        for part in parts { try StoreRules.check(part) }
        var params: [Parameter] = [.text(address.account), .integer(sequence)]
        let (ids, bodies) = Self.arrays(of: parts, into: &params)
        let rows = try query("SELECT outcome, current FROM authctl_compact($1::text, $2::bigint, \(ids), \(bodies))", params)
        guard let row = rows.first else { throw missingAccount() }
        let current = try row.unsigned(1)
        switch try row.unsigned(0) {
        case 0: return
        case 1: throw StoreError(.conflict(current: current), "the account store is already compacted up to change \(current)")
        default: throw StoreError(.invalid, "cannot compact up to change \(sequence): the store's last is \(current)")
        }
    }

    package func extent() throws(StoreError) -> StoreExtent {
        let rows = try query("SELECT snapshot, head FROM authctl_accounts WHERE account = $1::text", [.text(address.account)])
        guard let row = rows.first else { throw missingAccount() }
        return StoreExtent(snapshot: try row.unsigned(0), head: try row.unsigned(1))
    }

    package func metadata(_ keys: [String]) throws(StoreError) -> [String: StoreMetadata] {
        for key in keys { try StoreRules.checkKey(key) }
        guard !keys.isEmpty else { return [:] }
        var params: [Parameter] = [.text(address.account)]
        var names = [String]()
        for key in keys {
            params.append(.text(key))
            names.append("$\(params.count)::text")
        }
        let rows = try query("""
            SELECT m.key, m.version, m.bytes FROM authctl_accounts a
              LEFT JOIN authctl_metadata m ON m.account = a.account AND m.key = ANY(ARRAY[\(names.joined(separator: ","))])
             WHERE a.account = $1::text
            """, params)
        guard !rows.isEmpty else { throw missingAccount() }
        var out = [String: StoreMetadata]()
        for row in rows where !row.isNull(0) {
            out[String(decoding: row.bytes(0), as: UTF8.self)] = StoreMetadata(version: try row.unsigned(1), bytes: row.bytes(2))
        }
        return out
    }

    @discardableResult
    package func setMetadata(_ key: String, _ bytes: [UInt8], expecting expected: UInt64) throws(StoreError) -> UInt64 {
        try StoreRules.checkKey(key)
        try StoreRules.checkMetadata(bytes)
        let rows = try query("SELECT done, version FROM authctl_set_metadata($1::text, $2::text, $3::bytea, $4::bigint)",
                             [.text(address.account), .text(key), .bytes(bytes), .integer(expected)])
        guard let row = rows.first else { throw missingAccount() }
        let version = try row.unsigned(1)
        guard row.bytes(0) == [1] else {
            throw StoreError(.conflict(current: version), "the account store's '\(key)' is at version \(version), not \(expected)")
        }
        return version
    }

    // MARK: - Waking on changes

    /// Waits until a client — this one included — appends to the account or changes its
    /// metadata, or `timeout` passes: `true` when woken (by changes since the last wait, or during
    /// this one). The caller reads the store afterwards — a notification says only
    /// that something changed, and one sent while this client was not listening is not replayed,
    /// so a caller checks what it waits for before waiting and again after.
    package func waitForChange(timeout: Duration) throws(StoreError) -> Bool {
        try withConnection { (c: OpaquePointer) throws(StoreError) -> Bool in
            let raw = UnsafeMutableRawPointer(c)
            if authctl_pg_notifications(raw) > 0 { return true }
            var descriptor = pollfd(fd: authctl_pg_socket(raw), events: Int16(POLLIN), revents: 0)
            let ms = Int32(clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
            let ready = poll(&descriptor, 1, max(ms, 0))
            guard ready >= 0 || errno == EINTR else { throw StoreError(.unavailable, "waiting on the account store at \(address) failed") }
            let count = authctl_pg_notifications(raw)
            guard count >= 0 else { throw StoreError(.unavailable, "the account store at \(address) closed the connection") }
            return count > 0
        }
    }

    // MARK: - The connection

    /// Runs `body` on a connection, connecting first when there is none; a connection found
    /// broken afterwards is dropped, so the next call connects again.
    private func withConnection<T>(_ body: (OpaquePointer) throws(StoreError) -> T) throws(StoreError) -> T {
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        do {
            if connection == nil {
                if let problem = Self.clientProblem { throw StoreError(.unavailable, problem) }
                guard let made = authctl_pg_connect(address.conninfo) else {
                    throw StoreError(.unavailable, "cannot connect to the account store at \(address): out of memory")
                }
                guard authctl_pg_connected(made) != 0 else {
                    let message = address.scrub(Self.trimmed(String(cString: authctl_pg_connection_message(made))))
                    authctl_pg_close(made)
                    throw StoreError(.unavailable, "cannot connect to the account store at \(address): \(message)")
                }
                let opened = OpaquePointer(made)
                if !channel.isEmpty {
                    do throws(StoreError) { try listen(opened) } catch {
                        authctl_pg_close(made)
                        throw error
                    }
                }
                connection = opened
            }
            guard let open = connection else { throw StoreError(.unavailable, "no connection") }
            do throws(StoreError) {
                return try body(open)
            } catch {
                if authctl_pg_connected(UnsafeMutableRawPointer(open)) == 0 {
                    authctl_pg_close(UnsafeMutableRawPointer(open))
                    connection = nil
                }
                throw error
            }
        }
    }

    /// Checks the schema (creating or migrating it, under a lock, when it is older than this
    /// build's) and the account (creating it when `create`), and learns the account's channel.
    private func prepare(_ c: OpaquePointer, create: Bool) throws(StoreError) {
        var version: Int64 = 0
        do throws(StoreError) {
            let rows = try run(c, "SELECT max(version) FROM authctl_schema", [])
            version = rows.first.flatMap { $0.isNull(0) ? nil : try? $0.signed(0) } ?? 0
        } catch {
            guard error.message.contains("[42P01]") else { throw error }  // undefined_table: a new database
        }
        if version > Self.schemaVersion {
            throw StoreError(.unavailable, "the account store at \(address) has schema version \(version), newer than this authctl's (\(Self.schemaVersion)): upgrade authctl")
        }
        if version < Self.schemaVersion {
            _ = try run(c, PostgresSchema.migration, [])
        }
        if create {
            _ = try run(c, "INSERT INTO authctl_accounts (account) VALUES ($1::text) ON CONFLICT DO NOTHING", [.text(address.account)])
        }
        let rows = try run(c, "SELECT 'authctl_' || md5(account) FROM authctl_accounts WHERE account = $1::text", [.text(address.account)])
        guard let row = rows.first else { throw missingAccount() }
        channel = String(decoding: row.bytes(0), as: UTF8.self)
        try listen(c)
    }

    private func listen(_ c: OpaquePointer) throws(StoreError) {
        _ = try run(c, "LISTEN \"\(channel)\"", [])
    }

    private func missingAccount() -> StoreError {
        StoreError(.unavailable, "the account store at \(address) holds no account '\(address.account)'")
    }

    /// One statement on the connection, its rows read out.
    private func query(_ sql: String, _ params: [Parameter]) throws(StoreError) -> [Row] {
        try withConnection { (c: OpaquePointer) throws(StoreError) -> [Row] in try run(c, sql, params) }
    }

    private func run(_ c: OpaquePointer, _ sql: String, _ params: [Parameter]) throws(StoreError) -> [Row] {
        let raw = UnsafeMutableRawPointer(c)
        let encoded = params.map(\.encoded)
        let lengths = encoded.map { Int32($0.count) }
        // Each value in memory of its own for the call (an empty one still a valid pointer).
        let buffers = encoded.map { bytes -> UnsafeMutablePointer<CChar> in
            let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: max(bytes.count, 1))
            bytes.withUnsafeBytes { source in
                if let base = source.baseAddress { UnsafeMutableRawPointer(buffer).copyMemory(from: base, byteCount: bytes.count) }
            }
            return buffer
        }
        defer { buffers.forEach { $0.deallocate() } }
        let values: [UnsafePointer<CChar>?] = buffers.map { UnsafePointer($0) }
        let result = values.withUnsafeBufferPointer { v in
            lengths.withUnsafeBufferPointer { l in
                authctl_pg_exec(raw, sql, Int32(params.count), v.baseAddress, l.baseAddress)
            }
        }
        defer { authctl_pg_clear(result) }
        guard let result, authctl_pg_succeeded(result) != 0 else {
            let state = result.map { String(cString: authctl_pg_result_state($0)) } ?? ""
            let message = address.scrub(Self.trimmed(result.map { String(cString: authctl_pg_result_message($0)) }
                                                     ?? String(cString: authctl_pg_connection_message(raw))))
            let detail = "the account store at \(address) failed: \(message)" + (state.isEmpty ? "" : " [\(state)]")
            throw StoreError(Self.kind(of: state, connected: authctl_pg_connected(raw) != 0), detail)
        }
        let count = Int(authctl_pg_rows(result)), columns = Int(authctl_pg_columns(result))
        var rows = [Row]()
        rows.reserveCapacity(count)
        for r in 0..<count {
            var fields = [[UInt8]?]()
            fields.reserveCapacity(columns)
            for column in 0..<columns {
                if authctl_pg_is_null(result, Int32(r), Int32(column)) != 0 {
                    fields.append(nil)
                    continue
                }
                let length = Int(authctl_pg_length(result, Int32(r), Int32(column)))
                guard length > 0, let value = authctl_pg_value(result, Int32(r), Int32(column)) else {
                    fields.append([])
                    continue
                }
                fields.append(value.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) })
            }
            rows.append(Row(fields: fields))
        }
        return rows
    }

    /// A failure's kind by its SQLSTATE: what says the server cannot be used now — a lost or
    /// refused connection (class 08), a server shutting down or starting (57P0x), out of
    /// resources (53), a database, role or password refused (3D, 28, 42501), a lock or statement
    /// timeout (55P03, 57014), a serialization failure (40) — is `unavailable`, as is any failure
    /// that left the connection down; anything else is the store not holding what it should.
    static func kind(of state: String, connected: Bool) -> StoreError.Kind {
        guard connected else { return .unavailable }
        let unavailable = ["08", "57", "53", "3D", "28", "40", "55"]
        if unavailable.contains(where: state.hasPrefix) || state == "42501" || state.isEmpty { return .unavailable }
        return .corrupted
    }

    /// The message's first line (what follows — CONTEXT, the statement — repeats SQL, not news).
    private static func trimmed(_ message: String) -> String {
        String(message.split(whereSeparator: \.isNewline).map { $0.trimmingSpaces }.first { !$0.isEmpty } ?? "")
    }

    // MARK: - Values

    /// The objects' ids and bytes as parameters after those in `params`, and the two SQL arrays
    /// (`bytea[]`) that name them.
    private static func arrays(of objects: [StoreObject], into params: inout [Parameter]) -> (String, String) {
        var ids = [String](), bodies = [String]()
        for object in objects {
            params.append(.bytes(object.id))
            ids.append("$\(params.count)::bytea")
            params.append(.bytes(object.bytes))
            bodies.append("$\(params.count)::bytea")
        }
        return ("ARRAY[\(ids.joined(separator: ","))]::bytea[]", "ARRAY[\(bodies.joined(separator: ","))]::bytea[]")
    }

    private enum Parameter {
        case text(String), bytes([UInt8]), integer(UInt64)

        /// The binary format PostgreSQL reads: text as UTF-8, bytea as is, bigint big-endian.
        var encoded: [UInt8] {
            switch self {
            case .text(let s): Array(s.utf8)
            case .bytes(let b): b
            case .integer(let n): BigEndianBytes.of(min(n, UInt64(Int64.max)))
            }
        }
    }

    private struct Row {
        let fields: [[UInt8]?]

        func isNull(_ column: Int) -> Bool { fields[column] == nil }
        func bytes(_ column: Int) -> [UInt8] { fields[column] ?? [] }

        /// A bigint (8 bytes), an integer (4) or a boolean (1), big-endian.
        func signed(_ column: Int) throws(StoreError) -> Int64 {
            guard let b = fields[column], [1, 2, 4, 8].contains(b.count) else {
                throw StoreError(.corrupted, "the account store answered with a value that is not an integer")
            }
            var value = Int64(Int8(bitPattern: b[0]))
            for byte in b.dropFirst() { value = value << 8 | Int64(byte) }
            return value
        }

        func unsigned(_ column: Int) throws(StoreError) -> UInt64 {
            let value = try signed(column)
            guard value >= 0 else { throw StoreError(.corrupted, "the account store answered with a negative sequence or version") }
            return UInt64(value)
        }
    }
}

private extension Substring {
    var trimmingSpaces: Substring {
        var s = self
        while s.first == " " || s.first == "\t" { s.removeFirst() }
        while s.last == " " || s.last == "\t" { s.removeLast() }
        return s
    }
}
