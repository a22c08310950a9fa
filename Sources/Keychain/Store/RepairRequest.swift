import KeyVault
import SyncStore
import VirtualAuthenticator

/// A request to every vault of the account: read the store again from the start, and upload what
/// it lacks of your own. A device makes one when it finds the store has lost what only another
/// vault can give back — another vault's uploads, a snapshot's part — and each vault answers it by
/// doing so and publishing the request's id with its devices (``PublishedDevice/repaired``); once
/// every vault has, what the store lost that any vault still holds is back (docs/sync.md, "What the
/// devices check"). Metadata key `repair`, sealed like the directory (``SealedMetadata``), one record.
struct RepairRequest: Equatable {
    static let key = "repair"
    static let format: UInt8 = 1
    private static let recordId = Array("AUTHCTL-REPAIRRQ".utf8)

    enum Tag {
        static let id: UInt8 = 1, vault: UInt8 = 2, askedAt: UInt8 = 3, head: UInt8 = 4, reason: UInt8 = 5
        /// What it was asked for: per problem, the first 8 bytes of SHA-256 of its message.
        static let findings: UInt8 = 6
    }

    /// 16 random bytes.
    let id: [UInt8]
    /// The vault that asked.
    let vault: [UInt8]
    let askedAt: UInt64
    /// The store's last sequence when it was asked: what it found wrong is at or before it.
    let head: UInt64
    let reason: String
    /// What it was asked for (``RepairRequest/mark(_:)`` of each problem's message): the same loss
    /// found again — by a vault answering it, which reads the store from the start — is what it
    /// asks for, not a new one.
    var findings: Set<[UInt8]> = []

    /// What a request keeps of a problem's message to know it again.
    static func mark(_ message: String) -> [UInt8] { Array(SHA256.hash(Array(message.utf8)).prefix(8)) }

    var record: VaultRecord {
        var r = VaultRecord(id: Self.recordId, kind: .settings)
        r.setField(Tag.id, id)
        r.setField(Tag.vault, vault)
        r.setInteger(Tag.askedAt, askedAt)
        r.setInteger(Tag.head, head)
        r.setField(Tag.reason, Array(reason.utf8.prefix(1024)))
        r.setField(Tag.findings, findings.isEmpty ? nil : findings.sorted { $0.lexicographicallyPrecedes($1) }.prefix(128).flatMap { $0 })
        return r
    }

    init(id: [UInt8], vault: [UInt8], askedAt: UInt64, head: UInt64, reason: String) {
        (self.id, self.vault, self.askedAt, self.head, self.reason) = (id, vault, askedAt, head, reason)
    }

    init?(_ records: [VaultRecord]) {
        guard let r = records.first(where: { $0.id == Self.recordId }), let id = r.field(Tag.id), id.count == 16,
              let vault = r.field(Tag.vault), vault.count == 16,
              let asked = try? r.integer(Tag.askedAt, as: UInt64.self), let head = try? r.integer(Tag.head, as: UInt64.self)
        else { return nil }
        self.init(id: Array(id), vault: Array(vault), askedAt: asked, head: head,
                  reason: String(decoding: r.field(Tag.reason) ?? [], as: UTF8.self))
        let marks = Array(r.field(Tag.findings) ?? [])
        findings = Set(stride(from: 0, to: marks.count - marks.count % 8, by: 8).map { Array(marks[$0..<($0 + 8)]) })
    }

    /// The request in the store's value `value`: `.none` when there is none, `.unreadable` when it
    /// does not open under the account key or does not decode.
    static func read(_ value: StoreMetadata?, settings: AccountSettings) -> Read {
        guard let value else { return .none }
        guard let opened = SealedMetadata.open(value.bytes, known: format, key: key, accountKey: settings.accountKey,
                                               accountId: settings.accountId)
        else { return .unreadable(version: value.version) }
        guard opened.format == format else { return .none }  // a newer format: not this authctl's to answer
        guard let request = RepairRequest(opened.records) else { return .unreadable(version: value.version) }
        return .request(request, version: value.version)
    }

    enum Read: Equatable {
        case none
        case unreadable(version: UInt64)
        case request(RepairRequest, version: UInt64)

        var request: RepairRequest? { if case .request(let r, _) = self { r } else { nil } }
        var version: UInt64 {
            switch self {
            case .none: 0
            case .unreadable(let v), .request(_, let v): v
            }
        }
    }

    /// Publishes `self` over version `expected` of the value; `false` when another got there first.
    func publish(to store: any AccountStore, expecting expected: UInt64, settings: AccountSettings) throws(StoreError) -> Bool {
        let bytes = SealedMetadata.seal([record], format: Self.format, key: Self.key, accountKey: settings.accountKey,
                                        accountId: settings.accountId)
        do throws(StoreError) {
            try store.setMetadata(Self.key, bytes, expecting: expected)
            return true
        } catch {
            guard case .conflict = error.kind else { throw error }
            return false
        }
    }
}
