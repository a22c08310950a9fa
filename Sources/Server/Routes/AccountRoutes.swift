import Foundation
import Keychain
import KeyVault
import Session
import VirtualAuthenticator

/// `/accounts`: making, reading and ending accounts; an account's clock; its event stream.
extension AccountService {
    func addAccountRoutes(to router: inout Router<AccountService>) {
        router.add("POST", "/accounts") { s, call throws(Problem) in try s.createAccount(call) }
        router.add("GET", "/accounts/{account}") { s, call throws(Problem) in
            let hosted = try s.hosted(call.parameter("account"))
            return try hosted.serve { () throws(Problem) in .encoded(200, try AccountReport(hosted)) }
        }
        router.add("DELETE", "/accounts/{account}") { s, call throws(Problem) in
            guard let hosted = s.remove(call.parameter("account")) else { throw Problem.notFound("no account \(JSONText.shown(call.parameter("account")))") }
            _ = hosted.end()
            return .noContent
        }
        router.add("GET", "/accounts/{account}/attestation-ca") { s, call throws(Problem) in
            let hosted = try s.hosted(call.parameter("account"))
            return try hosted.serve { () throws(Problem) in
                let ca = try session { () throws(SessionError) in try hosted.session.attestationCA() }
                return .encoded(200, ["root": ca.rootPEM, "intermediate": ca.intermediate.pem])
            }
        }
        router.add("GET", "/accounts/{account}/clock") { s, call throws(Problem) in
            let hosted = try s.hosted(call.parameter("account"))
            return try hosted.serve { () throws(Problem) in .encoded(200, ClockReport(hosted)) }
        }
        router.add("POST", "/accounts/{account}/clock") { s, call throws(Problem) in
            let hosted = try s.hosted(call.parameter("account"))
            let body = try call.body(allowed: ["advance", "set"])
            let request: ClockRequest
            switch (try Self.duration(body, "advance"), try Self.instant(body, "set")) {
            case (let ms?, nil): request = .advance(milliseconds: ms)
            case (nil, let time?): request = .set(milliseconds: time)
            default: throw Problem.input("the body gives one of advance (a duration) or set (a time)")
            }
            return try hosted.serve { () throws(Problem) in
                _ = try session { () throws(SessionError) in try hosted.session.clock(request) }
                return .encoded(200, ClockReport(hosted))
            }
        }
        router.add("GET", "/accounts/{account}/events") { s, call throws(Problem) in
            let hosted = try s.hosted(call.parameter("account"))
            var after: UInt64 = 0
            if let text = call.query["after"] {
                guard let n = UInt64(text) else { throw Problem.input("after must be an event id (a whole number)") }
                after = n
            }
            var follow = true
            if let text = call.query["follow"] {
                guard text == "true" || text == "false" else { throw Problem.input("follow must be true or false") }
                follow = text == "true"
            }
            guard let stream = hosted.events.open(after: after, follow: follow, status: { try? hosted.serve { () throws(Problem) in try? hosted.session.syncStatus() } ?? nil })
            else { throw Problem.notFound("no account \(JSONText.shown(hosted.id)) (it ended)") }
            return HTTPResponse(status: 200, contentType: .eventStream, body: [], stream: stream)
        }
    }

    /// `POST /accounts`: an isolated account, its devices enrolled (an empty body: one device
    /// `phone`, PIN `1234`), in memory unless `storage` is `vault`.
    private func createAccount(_ call: Router<AccountService>.Call) throws(Problem) -> HTTPResponse {
        let body = try call.body(allowed: ["devices", "profile", "clock", "sync", "storage", "store"])
        var devices = [DeviceSpec]()
        if body.has("devices") {
            guard let list = body.object["devices"] as? [Any] else { throw Problem.input("devices must be a list of objects") }
            for entry in list {
                guard let entry = entry as? [String: Any] else { throw Problem.input("devices must be a list of objects") }
                devices.append(try DeviceSpec(RequestBody(object: entry), approver: false))
            }
        }
        if devices.isEmpty { devices = [DeviceSpec(name: "phone", pin: "1234")] }
        guard Set(devices.map(\.name)).count == devices.count else { throw Problem.input("two devices have one name") }
        let store = try body.string("store")
        let storage = try body.string("storage") ?? (store == nil ? "memory" : "vault")
        guard storage == "memory" || storage == "vault" else { throw Problem.input("storage must be memory or vault") }
        guard store == nil || storage == "vault" else { throw Problem.input("an account on a store is a vault's: storage must be vault") }
        var clock: VirtualClock?
        if let spec = try body.object("clock") {
            guard spec.object.keys.allSatisfy(["mode", "start"].contains) else { throw Problem.input("clock takes mode and start") }
            switch try spec.string("mode") ?? "real" {
            case "real":
                guard !spec.has("start") else { throw Problem.input("a real clock has no start: it is the time now") }
            case "virtual":
                clock = VirtualClock(start: try Self.instant(spec, "start") ?? WallClock.live.milliseconds())
            default:
                throw Problem.input("clock.mode must be real or virtual")
            }
        }
        let sync = try body.object("sync")
        if let sync, let unknown = sync.object.keys.first(where: { !Self.syncMembers.contains($0) }) {
            throw Problem.input("sync has a member '\(JSONText.shown(unknown))' (it takes \(Self.syncMembers.sorted().joined(separator: ", ")))")
        }
        let profile = try body.string("profile")
        let directory = try makeDirectory()
        let pins = Dictionary(devices.compactMap { d in d.pin.map { (d.name, $0) } }, uniquingKeysWith: { a, _ in a })
        let persons = HostedPeople(pins: pins, clock: clock)
        do throws(Problem) {
            let spec = AccountSpec(path: directory + "/vault", passphrase: Self.secret("serve"), kdf: .min,
                                   devices: devices.map(\.account), profile: profile,
                                   keeping: storage == "vault" ? .held : .throwAway(storeInMemory: true),
                                   store: store.map { AccountSpec.SharedStore(address: $0) }, clock: clock, attestationCA: attestationCA)
            let created = try session { () throws(SessionError) in try Session.create(spec, people: persons) }
            let id = Base64URL.encode(RandomSource.live.bytes(12))
            let hosted = HostedAccount(id: id, session: created, persons: persons, directory: directory, storage: storage)
            if let sync { try Self.applySync(sync, to: hosted) }
            try add(hosted)
            var report = try hosted.serve { () throws(Problem) in try AccountReport(hosted) }
            report.recoverySecret = spec.store?.recoverySecret
            var answer = HTTPResponse.encoded(201, report)
            answer.headers = [("Location", "/accounts/\(id)")]
            return answer
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    static let syncMembers: Set<String> = ["upload", "download", "device", "seed", "backupStateImmediate"]

    /// Sync settings: delays (for the account, or `device`'s), the delays' seed, and whether BS is
    /// 1 before an upload lands.
    static func applySync(_ body: RequestBody, to hosted: HostedAccount) throws(Problem) {
        let upload = try delay(body, "upload"), download = try delay(body, "download")
        let device = try body.string("device")
        let seed = try body.integer("seed"), immediate = try body.bool("backupStateImmediate")
        if device != nil && upload == nil && download == nil { throw Problem.input("device names whose delays to set: give upload or download") }
        try session { () throws(SessionError) in
            if upload != nil || download != nil { try hosted.session.setDelays(upload: upload, download: download, device: device) }
            if seed != nil || immediate != nil { try hosted.session.setSyncOptions(seed: seed, backupStateImmediate: immediate) }
        }
    }

    /// A delay: `"2s"`, `"1s..5s"`, or milliseconds.
    static func delay(_ body: RequestBody, _ key: String) throws(Problem) -> DelayRange? {
        guard body.has(key) else { return nil }
        if let text = body.object[key] as? String {
            guard let range = DelayRange(parsing: text) else { throw Problem.input("\(key) must be a delay such as \"2s\" or \"1s..5s\", or milliseconds") }
            return range
        }
        guard let ms = try body.integer(key, maximum: DelayRange.maximum) else { return nil }
        return DelayRange(lower: ms, upper: ms)
    }

    /// A duration: `"90s"`, `"1m30s"`, or milliseconds.
    static func duration(_ body: RequestBody, _ key: String) throws(Problem) -> UInt64? {
        guard body.has(key) else { return nil }
        if let text = body.object[key] as? String {
            guard let ms = DelayRange.milliseconds(text) else { throw Problem.input("\(key) must be a duration such as \"90s\", or milliseconds") }
            return ms
        }
        return try body.integer(key, maximum: VirtualClock.end)
    }

    /// A time: RFC 3339 (`"2026-01-01T00:00:00Z"`) or milliseconds since the Unix epoch, from
    /// 1970 to the end of the year 9999 (RFC 3339's last: a clock past it would have no time to
    /// answer in it).
    static func instant(_ body: RequestBody, _ key: String) throws(Problem) -> UInt64? {
        guard body.has(key) else { return nil }
        if let text = body.object[key] as? String {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime]
            let fractional = ISO8601DateFormatter()
            fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            // The formatter reads a year of five digits too, which RFC 3339 has not: past the end.
            guard let date = formatter.date(from: text) ?? fractional.date(from: text), date.timeIntervalSince1970 >= 0,
                  (date.timeIntervalSince1970 * 1000).rounded() <= Double(VirtualClock.end) else {
                throw Problem.input("\(key) must be an RFC 3339 time from 1970 to 9999, such as \"2026-01-01T00:00:00Z\", or milliseconds since 1970")
            }
            return UInt64((date.timeIntervalSince1970 * 1000).rounded())
        }
        return try body.integer(key, maximum: VirtualClock.end)
    }
}

/// A device as an account's creation or `POST …/devices` gives it.
struct DeviceSpec {
    var name: String
    var pin: String?
    var maxPINAttempts = Device.defaultMaxPINAttempts
    var profile: String?
    var aaguid: [UInt8]?
    var approvedBy: String?
    var approverPin: String?

    init(name: String, pin: String?) {
        self.name = name
        self.pin = pin
    }

    /// The device as the account is made with it (its approver is the session's default).
    var account: AccountSpec.DeviceSpec {
        AccountSpec.DeviceSpec(name: name, pin: pin.map(AccountService.secret), maxPINAttempts: maxPINAttempts, profile: profile, aaguid: aaguid)
    }

    init(_ body: RequestBody, approver: Bool) throws(Problem) {
        let allowed: Set<String> = approver ? ["name", "pin", "maxPINAttempts", "profile", "aaguid", "approvedBy", "approverPin"]
                                            : ["name", "pin", "maxPINAttempts", "profile", "aaguid"]
        if let unknown = body.object.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw Problem.input("a device has a member '\(JSONText.shown(unknown))' (it takes \(allowed.sorted().joined(separator: ", ")))")
        }
        name = try body.string(required: "name")
        pin = try body.string("pin")
        if let attempts = try body.integer("maxPINAttempts", maximum: 100) { maxPINAttempts = UInt32(attempts) }
        profile = try body.string("profile")
        if let text = try body.string("aaguid") {
            guard let bytes = AuthenticatorProfile.parseAAGUID(text) else { throw Problem.input("aaguid must be a UUID (8-4-4-4-12 hex digits)") }
            aaguid = bytes
        }
        approvedBy = try body.string("approvedBy")
        approverPin = try body.string("approverPin")
    }
}

/// An account as `POST /accounts` and `GET /accounts/{account}` answer it.
struct AccountReport: Encodable {
    let id: String
    let storage: String
    let devices: [DeviceReport]
    let clock: ClockReport
    /// Only in the answer to `POST /accounts` with a `store`: the account's recovery secret.
    var recoverySecret: String?

    init(_ hosted: HostedAccount) throws(Problem) {
        id = hosted.id
        storage = hosted.storage
        let status = try session { () throws(SessionError) in try hosted.session.syncStatus() }
        devices = try status.devices.filter { $0.vault == "this" }.map { d throws(Problem) in try DeviceReport(d, in: hosted) }
        clock = ClockReport(hosted)
    }
}

/// An account's clock: `real` or `virtual`, and its time (milliseconds since the Unix epoch, and
/// as RFC 3339).
struct ClockReport: Encodable {
    let mode: String
    let now: UInt64
    let time: String

    init(_ hosted: HostedAccount) {
        mode = hosted.session.clock == nil ? "real" : "virtual"
        now = hosted.now
        time = ClockReport.rfc3339(now)
    }

    static func rfc3339(_ ms: UInt64) -> String {
        let seconds = PasskeyReport.timestamp(ms / 1000)
        guard seconds.hasSuffix("Z") else { return seconds }
        return seconds.dropLast() + String(format: ".%03dZ", Int(ms % 1000))
    }
}
