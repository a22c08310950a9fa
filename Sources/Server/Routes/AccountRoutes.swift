import Foundation
import Session

/// `/accounts`: making, reading and ending accounts; an account's clock; its event stream.
extension AccountService {
    func addAccountRoutes(to router: inout Router<AccountService>) {
        router.add("POST", "/accounts", body: Body.NewAccount.self) { s, _, body throws(Problem) in try s.createAccount(body) }
        router.add("GET", "/accounts/{account}") { s, call throws(Problem) in
            let hosted = try s.hosted(call.parameter("account"))
            return try hosted.serve { () throws(Problem) in .encoded(200, try AccountReport(hosted)).warning(hosted.session.takeWarnings()) }
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
        router.add("POST", "/accounts/{account}/clock", body: Body.ClockChange.self) { s, call, body throws(Problem) in
            let hosted = try s.hosted(call.parameter("account"))
            let request: ClockRequest
            switch (body.advance, body.set) {
            case (let advance?, nil): request = .advance(milliseconds: advance.milliseconds)
            case (nil, let time?): request = .set(milliseconds: time.milliseconds)
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
    private func createAccount(_ body: Body.NewAccount) throws(Problem) -> HTTPResponse {
        var devices = try (body.devices ?? []).map { spec throws(Problem) in try DeviceSpec(spec) }
        if devices.isEmpty { devices = [DeviceSpec(name: "phone", pin: "1234")] }
        guard Set(devices.map(\.name)).count == devices.count else { throw Problem.input("two devices have one name") }
        let store = body.store
        let storage = body.storage?.value.rawValue ?? (store == nil ? "memory" : "vault")
        guard store == nil || storage == "vault" else { throw Problem.input("an account on a store is a vault's: storage must be vault") }
        var clock: VirtualClock?
        if let spec = body.clock {
            switch spec.mode?.value ?? .real {
            case .real:
                guard spec.start == nil else { throw Problem.input("a real clock has no start: it is the time now") }
            case .virtual:
                clock = VirtualClock(start: spec.start?.milliseconds ?? WallClock.live.milliseconds())
            }
        }
        let sync = body.sync
        let profile = body.profile
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
            var answer = HTTPResponse.encoded(201, report).warning(hosted.session.takeWarnings())
            answer.headers = [("Location", "/accounts/\(id)")]
            return answer
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    /// Sync settings: delays (for the account, or `device`'s), the delays' seed, and whether BS is
    /// 1 before an upload lands.
    static func applySync(_ body: Body.SyncSettings, to hosted: HostedAccount) throws(Problem) {
        let upload = body.upload?.range, download = body.download?.range
        if body.device != nil && upload == nil && download == nil { throw Problem.input("device names whose delays to set: give upload or download") }
        try session { () throws(SessionError) in
            if upload != nil || download != nil { try hosted.session.setDelays(upload: upload, download: download, device: body.device) }
            if body.seed != nil || body.backupStateImmediate != nil {
                try hosted.session.setSyncOptions(seed: body.seed, backupStateImmediate: body.backupStateImmediate)
            }
        }
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

    /// A device of a new account.
    init(_ body: Body.DeviceSpec) throws(Problem) {
        try self.init(name: body.name, pin: body.pin, maxPINAttempts: body.maxPINAttempts, profile: body.profile, aaguid: body.aaguid)
    }

    /// A device added to an account there is.
    init(_ body: Body.NewDevice) throws(Problem) {
        try self.init(name: body.name, pin: body.pin, maxPINAttempts: body.maxPINAttempts, profile: body.profile, aaguid: body.aaguid)
        approvedBy = body.approvedBy
        approverPin = body.approverPin
    }

    private init(name: String, pin: String?, maxPINAttempts: UInt64?, profile: String?, aaguid: String?) throws(Problem) {
        self.name = name
        self.pin = pin
        if let maxPINAttempts { self.maxPINAttempts = UInt32(maxPINAttempts) }
        self.profile = profile
        if let aaguid { self.aaguid = try Self.aaguid(aaguid) }
    }

    /// An AAGUID as a body gives it: a UUID.
    static func aaguid(_ text: String) throws(Problem) -> [UInt8] {
        guard let bytes = AuthenticatorProfile.parseAAGUID(text) else { throw Problem.input("aaguid must be a UUID (8-4-4-4-12 hex digits)") }
        return bytes
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
        devices = try session { () throws(SessionError) in try hosted.session.deviceReports() }.filter { $0.vault == "this" }
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
