import Foundation
import Keychain
import KeyVault
import Session
import Synchronization
import VirtualAuthenticator

/// The accounts `authctl serve` hosts, and the routes that reach them (docs/server.md): each
/// account in memory — a throw-away vault of its own, never flushed, removed when the account
/// ends or the server stops — with its own lock, so parallel tests on their own accounts never
/// wait on each other or see each other.
public final class AccountService: @unchecked Sendable {
    /// One hosted account: its session, the devices' PINs (what the person at each types), and
    /// its directory.
    final class Hosted: @unchecked Sendable {
        let lock = Mutex(())
        let session: Session
        let directory: String
        let pins: [String: String]

        init(session: Session, directory: String, pins: [String: String]) {
            self.session = session
            self.directory = directory
            self.pins = pins
        }
    }

    private let token: [UInt8]
    private let scratch: String
    private let accounts = Mutex([String: Hosted]())

    /// - Parameters:
    ///   - token: what every request but `GET /health` carries as `Authorization: Bearer TOKEN`.
    ///   - scratch: where the accounts' throw-away vaults are made.
    public init(token: String, scratch: String) {
        self.token = Array(token.utf8)
        self.scratch = scratch
    }

    /// Ends every account.
    public func close() {
        let all = accounts.withLock { held in defer { held = [:] }; return Array(held.values) }
        for hosted in all { hosted.lock.withLock { _ in try? FileManager.default.removeItem(atPath: hosted.directory) } }
    }

    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        if request.method == "GET" && parts == ["health"] { return .json(200, #"{"status":"ok"}"#) }
        guard authorized(request.authorization) else {
            return Self.problem(401, "unauthorized", "the request needs Authorization: Bearer TOKEN (the server's token)")
        }
        guard !request.bodyTooLarge else { return Self.problem(413, "badInput", "the body is larger than the server accepts (1 MiB)") }
        switch (request.method, parts.count, parts.first) {
        case ("POST", 1, "accounts"):
            return createAccount(request.body)
        case ("DELETE", 2, "accounts"):
            guard let hosted = accounts.withLock({ $0.removeValue(forKey: parts[1]) }) else { return Self.noAccount(parts[1]) }
            hosted.lock.withLock { _ in try? FileManager.default.removeItem(atPath: hosted.directory) }
            return HTTPResponse(status: 204, contentType: .none, body: [])
        case ("POST", 5, "accounts") where parts[2] == "devices" && (parts[4] == "register" || parts[4] == "sign"):
            guard let hosted = accounts.withLock({ $0[parts[1]] }) else { return Self.noAccount(parts[1]) }
            return ceremony(parts[4], device: parts[3], body: request.body, on: hosted)
        default:
            return Self.problem(404, "usage", "no route \(request.method) \(Self.shown(request.path))")
        }
    }

    /// The token compared in constant time.
    private func authorized(_ header: String?) -> Bool {
        guard let header, header.hasPrefix("Bearer ") else { return false }
        let given = Array(header.utf8.dropFirst(7))
        guard given.count == token.count else { return false }
        return zip(given, token).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    // MARK: - Accounts

    /// `POST /accounts`: `{"devices": [{"name": "phone", "pin": "1234"}, …]}` (absent or empty
    /// body: one device `phone` with PIN `1234`).
    private func createAccount(_ body: [UInt8]) -> HTTPResponse {
        var devices = [(name: String, pin: String?)]()
        if !body.isEmpty {
            guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
                return Self.problem(400, "syntaxError", "the body is not a JSON object")
            }
            if let list = object["devices"] {
                guard let list = list as? [[String: Any]] else { return Self.problem(400, "badInput", "devices must be a list of objects") }
                for entry in list {
                    guard let name = entry["name"] as? String, !name.isEmpty else { return Self.problem(400, "badInput", "each device needs a name") }
                    guard entry["pin"] == nil || entry["pin"] is String else { return Self.problem(400, "badInput", "a device's pin must be a string") }
                    devices.append((name, entry["pin"] as? String))
                }
            }
        }
        if devices.isEmpty { devices = [("phone", "1234")] }
        guard Set(devices.map(\.name)).count == devices.count else { return Self.problem(400, "badInput", "two devices have one name") }
        var template = Array((scratch + "/authctl-serve-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { return Self.problem(500, "ioError", "cannot make an account's directory in \(scratch)") }
        let directory = String(cString: made)
        let pins = Dictionary(devices.compactMap { d in d.pin.map { (d.name, $0) } }, uniquingKeysWith: { a, _ in a })
        do throws(SessionError) {
            let account: Account
            do {
                account = try Account.create(at: directory + "/vault", passphrase: Self.secret("serve"), kdf: .min, deviceName: devices[0].name,
                                             biometricPIN: devices[0].pin.map(Self.secret), durability: .none, sharing: .held, storeInMemory: true)
            } catch { throw SessionError(error) }
            let session = Session(account: account) { device, person in
                var chosen = person
                if chosen.pin == nil { chosen.pin = pins[device] }
                return Session.nobody(device, chosen)
            }
            for device in devices.dropFirst() {
                try session.addDevice(device.name, pin: device.pin.map(Self.secret), approvedBy: device.pin == nil ? nil : pins[devices[0].name].map { _ in devices[0].name })
            }
            let id = Base64URL.encode(RandomSource.live.bytes(12))
            accounts.withLock { $0[id] = Hosted(session: session, directory: directory, pins: pins) }
            let names = devices.map { #"{"name":\#(Self.quoted($0.name))}"# }.joined(separator: ",")
            return .json(201, #"{"id":"\#(id)","devices":[\#(names)]}"#)
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            return Self.problem(error)
        }
    }

    // MARK: - Ceremonies

    /// `POST /accounts/{account}/devices/{device}/register|sign`: `{"options": {…}, "origin": "…",
    /// "topOrigin"?: "…", "pin"?: "…", "userAction"?: "approve|cancel|timeout"}`.
    private func ceremony(_ kind: String, device: String, body: [UInt8], on hosted: Hosted) -> HTTPResponse {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            return Self.problem(400, "syntaxError", "the body is not a JSON object")
        }
        guard let options = object["options"] as? [String: Any], let data = try? JSONSerialization.data(withJSONObject: options) else {
            return Self.problem(400, "badInput", "options must be a JSON object (PublicKeyCredential creation or request options)")
        }
        guard let origin = object["origin"] as? String else { return Self.problem(400, "badInput", "origin must be a string") }
        var person = PersonRequest()
        if let pin = object["pin"] {
            guard let pin = pin as? String else { return Self.problem(400, "badInput", "pin must be a string") }
            person.pin = pin
        }
        if let action = object["userAction"] {
            guard let text = action as? String, let parsed = UserAction(rawValue: text) else {
                return Self.problem(400, "badInput", "userAction must be one of approve, cancel, timeout")
            }
            person.action = parsed
            person.instantTimeout = true
        }
        let caller = CallerContext(origin: origin, topOrigin: object["topOrigin"] as? String)
        return hosted.lock.withLock { _ in
            do throws(SessionError) {
                let response = kind == "register"
                    ? try hosted.session.register(RegisterRequest(device: device, caller: caller, options: .json(Array(data)), person: person))
                    : try hosted.session.sign(SignRequest(device: device, caller: caller, options: .json(Array(data)), person: person))
                return .json(200, response.json)
            } catch {
                return Self.problem(error)
            }
        }
    }

    // MARK: - Problems (RFC 9457)

    /// The HTTP status of an error of the table: the caller's mistakes 400, a ceremony's outcome
    /// 422 (never 5xx), a busy vault 409, the rest 500.
    static func status(of name: SessionError.Name) -> Int {
        switch name {
        case .badInput, .syntaxError, .encodingError, .usage: 400
        case .canceled, .failed, .invalidResponse, .notHandled, .notInteractive, .matchedExcludedCredential, .biometryLockout, .timedOut,
             .securityError, .notSupported, .passkeysNotSupported: 422
        case .vaultBusy, .vaultExists: 409
        case .unknown, .vaultLocked, .vaultCorrupted, .vaultNotFound, .vaultInsecure, .scenarioFailed, .ioError, .vaultTooNew: 500
        }
    }

    static func problem(_ error: SessionError) -> HTTPResponse {
        let status = status(of: error.name)
        var fields = [#""type":"about:blank""#, #""title":\#(quoted(error.name.rawValue))"#, #""status":\#(status)"#,
                      #""detail":\#(quoted(error.message))"#, #""name":\#(quoted(error.name.rawValue))"#,
                      #""domException":\#(quoted(error.name.domException))"#]
        if let ctap = error.name.ctapStatus { fields.append(#""ctapStatus":\#(ctap)"#) }
        return HTTPResponse(status: status, contentType: .problem, body: Array("{\(fields.joined(separator: ","))}".utf8))
    }

    static func problem(_ status: Int, _ name: String, _ detail: String) -> HTTPResponse {
        let body = #"{"type":"about:blank","title":\#(quoted(name)),"status":\#(status),"detail":\#(quoted(detail)),"name":\#(quoted(name))}"#
        return HTTPResponse(status: status, contentType: .problem, body: Array(body.utf8))
    }

    static func noAccount(_ id: String) -> HTTPResponse { problem(404, "usage", "no account \(shown(id))") }

    /// A path or id as a message shows it: at most 200 characters.
    static func shown(_ text: String) -> String { text.count > 200 ? String(text.prefix(200)) + "…" : text }

    static func quoted(_ text: String) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])) ?? Data("[\"\"]".utf8)
        return String(decoding: data.dropFirst().dropLast(), as: UTF8.self)
    }

    static func secret(_ text: String) -> SecureBytes {
        var bytes = Array(text.utf8)
        return SecureBytes(consuming: &bytes)
    }
}
