import Foundation
import Session
import Synchronization

/// WebAuthn L3 §11's WebDriver extension commands, at their own paths and with their own
/// parameter names, so that code written for Selenium's or WebdriverIO's virtual-authenticator
/// helpers ports by changing the base URL. Answers are WebDriver's, `{"value": …}`; a failure is
/// also a problem (docs/server.md) with `value.error` as WebDriver names it.
///
/// A virtual authenticator is an account of its own with one device, both named by the
/// authenticator's id — independent of every other, as a browser's virtual authenticators are —
/// so the account routes (`/accounts/{authenticatorId}/devices/{authenticatorId}/register`, its
/// events, its clock) reach it too. A session is only a group of authenticators: any id names
/// one (`POST /session` makes a new id), and `DELETE /session/{id}` ends its authenticators.
extension AccountService {
    func addWebDriverRoutes(to router: inout Router<AccountService>) {
        router.add("POST", "/session", body: Body.NewSession.self) { s, _, _ throws(Problem) in
            let id = Base64URL.encode(RandomSource.live.bytes(12))
            s.webDriverSessions.withLock { $0[id] = [] }
            return .encoded(200, ["value": NewSession(sessionId: id)])
        }
        router.add("DELETE", "/session/{session}") { s, call throws(Problem) in
            let authenticators = s.webDriverSessions.withLock { $0.removeValue(forKey: call.parameter("session")) } ?? []
            for id in authenticators { _ = s.remove(id)?.end() }
            return .json(200, #"{"value":null}"#)
        }
        let base = "/session/{session}/webauthn/authenticator"
        router.add("POST", base, body: Body.VirtualAuthenticator.self, answering: Self.webDriver) { s, call, body throws(Problem) in
            try s.addVirtualAuthenticator(call, body)
        }
        router.add("DELETE", base + "/{authenticator}") { s, call throws(Problem) in
            try Self.webDriver { () throws(Problem) in
                let id = try s.authenticator(call).id
                s.webDriverSessions.withLock { _ = $0[call.parameter("session")]?.remove(id) }
                _ = s.remove(id)?.end()
                return .json(200, #"{"value":null}"#)
            }
        }
        router.add("POST", base + "/{authenticator}/credential", body: Body.CredentialParameters.self, answering: Self.webDriver) { s, call, body throws(Problem) in
            // Required here as Add Credential's steps (§11) require them ("If |isResidentCredential| is not
            // defined", "If |signCount| is not defined, return … invalid argument"); `signCount`
            // `null` is a credential with no signature counter (w3c/webauthn#2382).
            guard body.isResidentCredential != nil else { throw Problem.input("isResidentCredential is required (true or false)") }
            guard body.signCount != nil else {
                throw Problem.input("signCount is required: a whole number from 0 to 4294967295, or null (no signature counter)")
            }
            let hosted = try s.authenticator(call)
            return try hosted.serve { () throws(Problem) in
                // "If |isResidentCredential| is true and the |authenticator|'s |hasResidentKey|
                // property is false, return a WebDriver error with WebDriver error code invalid argument."
                guard body.isResidentCredential == false || hosted.webDriverHasResidentKey else {
                    throw Problem.input("isResidentCredential is true and the virtual authenticator has no resident keys (hasResidentKey is false)")
                }
                let added = Self.addedPasskey(body, defaults: hosted.webDriverBackupDefaults)
                let credential = try session { () throws(SessionError) in try hosted.session.addPasskey(device: hosted.id, added) }
                hosted.events.emit(.credentialAdded, CredentialEventData(device: hosted.id, credential, time: hosted.now))
                return .json(200, #"{"value":null}"#)
            }
        }
        router.add("GET", base + "/{authenticator}/credentials") { s, call throws(Problem) in
            try Self.webDriver { () throws(Problem) in
                let hosted = try s.authenticator(call)
                return try hosted.serve { () throws(Problem) in
                    let held = try session { () throws(SessionError) in try hosted.session.passkeys(device: hosted.id) }
                    // Get Credentials (§11) fails only for an unknown authenticator: what its simulated user does
                    // (isUserVerified, isUserConsenting) is for ceremonies, not for this read.
                    let user = hosted.webDriverUser
                    hosted.webDriverUser = nil
                    defer { hosted.webDriverUser = user }
                    let shapes = try held.map { c throws(Problem) in
                        // The key itself, as §11.8 gives it; the authenticator's user verifies for a
                        // passkey sealed under the biometric.
                        let key = try session { () throws(SessionError) in try hosted.session.privateKey(device: hosted.id, credentialId: c.id) }
                        return WebDriverCredential(gotten: c, privateKey: key)
                    }
                    return .encoded(200, ["value": shapes])
                }
            }
        }
        router.add("DELETE", base + "/{authenticator}/credentials/{credential}") { s, call throws(Problem) in
            try Self.webDriver { () throws(Problem) in
                let hosted = try s.authenticator(call)
                let id = try Self.credentialId(call)
                return try hosted.serve { () throws(Problem) in
                    _ = try Self.held(id, on: hosted.id, in: hosted)
                    let gone = try session { () throws(SessionError) in try hosted.session.delete(device: hosted.id, credentialId: id) }
                    hosted.events.emit(.credentialDeleted, CredentialEventData(device: hosted.id, gone, time: hosted.now))
                    return .json(200, #"{"value":null}"#)
                }
            }
        }
        router.add("DELETE", base + "/{authenticator}/credentials") { s, call throws(Problem) in
            try Self.webDriver { () throws(Problem) in
                let hosted = try s.authenticator(call)
                return try hosted.serve { () throws(Problem) in
                    for c in try session({ () throws(SessionError) in try hosted.session.passkeys(device: hosted.id) }) {
                        let gone = try session { () throws(SessionError) in try hosted.session.delete(device: hosted.id, credentialId: c.id) }
                        hosted.events.emit(.credentialDeleted, CredentialEventData(device: hosted.id, gone, time: hosted.now))
                    }
                    return .json(200, #"{"value":null}"#)
                }
            }
        }
        router.add("POST", base + "/{authenticator}/uv", body: Body.UserVerified.self, answering: Self.webDriver) { s, call, body throws(Problem) in
            let hosted = try s.authenticator(call)
            return try hosted.serve { () throws(Problem) in
                hosted.webDriverUser = (hosted.webDriverUser?.consenting ?? true, body.isUserVerified)
                return .json(200, #"{"value":null}"#)
            }
        }
        router.add("POST", base + "/{authenticator}/credentials/{credential}/props", body: Body.CredentialProperties.self,
                   answering: Self.webDriver) { s, call, body throws(Problem) in
            let hosted = try s.authenticator(call)
            let id = try Self.credentialId(call)
            let eligible = body.backupEligibility, state = body.backupState, counter = body.signCount?.setting
            return try hosted.serve { () throws(Problem) in
                _ = try Self.held(id, on: hosted.id, in: hosted)
                let changed = try session { () throws(SessionError) in
                    try hosted.session.setCredentialProperties(device: hosted.id, credentialId: id, eligible: eligible, state: state, counter: counter)
                }
                hosted.events.emit(.credentialUpdated, CredentialEventData(device: hosted.id, changed, time: hosted.now))
                return .json(200, #"{"value":null}"#)
            }
        }
    }

    /// Add Virtual Authenticator (§11.4): `protocol` (`ctap2` or `ctap2_1`; `ctap1/u2f` is not a
    /// passkey provider), `transport`, `hasResidentKey`, `hasUserVerification`, `isUserConsenting`
    /// (default true), `isUserVerified` (default false), `extensions` (authenticator extensions
    /// authctl has), `defaultBackupEligibility`, `defaultBackupState`. The device is a platform
    /// authenticator whatever the transport says.
    private func addVirtualAuthenticator(_ call: Router<AccountService>.Call, _ body: Body.VirtualAuthenticator) throws(Problem) -> HTTPResponse {
        // A valid value of §11's, which this endpoint cannot be: WebDriver's unsupported operation.
        guard body.protocol.value != .ctap1 else {
            throw Problem.unsupported("protocol ctap1/u2f is not supported: authctl's virtual authenticators are CTAP 2 platform authenticators (use ctap2 or ctap2_1)")
        }
        // Add Virtual Authenticator (§11): "If |extension| is not an extension identifier supported by the endpoint node …,
        // return a WebDriver error with WebDriver error code unsupported operation."
        if let unknown = (body.extensions ?? []).first(where: { !Self.authenticatorExtensions.contains($0) }) {
            throw Problem.unsupported("extension \(JSONText.quoted(JSONText.shown(unknown))) is not supported (authctl's are \(Self.authenticatorExtensions.sorted().joined(separator: ", ")))")
        }
        let uv = body.hasUserVerification ?? false
        let consenting = body.isUserConsenting ?? true, verified = body.isUserVerified ?? false
        let eligible = body.defaultBackupEligibility, state = body.defaultBackupState
        // Its device is named by its id, and a device's name never starts with '-' (one id in 64 would).
        var id = Base64URL.encode(RandomSource.live.bytes(12))
        while id.hasPrefix("-") { id = Base64URL.encode(RandomSource.live.bytes(12)) }
        let pin = uv ? String(format: "%06u", UInt32.random(in: 0..<1_000_000)) : nil
        let directory = try makeDirectory()
        do throws(Problem) {
            let persons = HostedPeople(pins: pin.map { [id: $0] } ?? [:], clock: nil)
            let spec = AccountSpec(path: directory + "/vault", passphrase: Self.secret("serve"), kdf: .min,
                                   devices: [AccountSpec.DeviceSpec(name: id, pin: pin.map(Self.secret))],
                                   keeping: .throwAway(storeInMemory: true), attestationCA: attestationCA)
            let created = try session { () throws(SessionError) in try Session.create(spec, people: persons) }
            let hosted = HostedAccount(id: id, session: created, persons: persons, directory: directory, storage: "memory")
            hosted.webDriverUser = (consenting, verified)
            hosted.countsSignaturesByDefault = true
            hosted.webDriverHasResidentKey = body.hasResidentKey ?? false
            hosted.webDriverBackupDefaults = (eligible ?? false, state ?? false)
            // The backup flags of the passkeys it makes: device-bound (BE=0) unless
            // defaultBackupEligibility is true (§11: its default is false), and BS=1 at once.
            hosted.deviceBoundByDefault = eligible != true
            if let state { try session { () throws(SessionError) in try hosted.session.setSyncOptions(backupStateImmediate: state) } }
            try add(hosted)
            _ = webDriverSessions.withLock { $0[call.parameter("session"), default: []].insert(id) }
            return .encoded(200, ["value": id])
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    /// The authenticator the path names, of the session it names.
    private func authenticator(_ call: Router<AccountService>.Call) throws(Problem) -> HostedAccount {
        let id = call.parameter("authenticator")
        guard webDriverSessions.withLock({ $0[call.parameter("session")]?.contains(id) }) == true else {
            throw Problem.input("session \(JSONText.shown(call.parameter("session"))) has no virtual authenticator \(JSONText.shown(id))")
        }
        return try hosted(id)
    }

    /// A problem as WebDriver answers it: its error code (`value.error`, `value.message`) and the
    /// HTTP status WebDriver's table gives that code. §11 names `invalid argument` for every
    /// parameter it refuses and every authenticator or credential id that matches none (a `4xx`
    /// of the request's own); what the endpoint cannot do is `unsupported operation`; anything
    /// else (a ceremony's outcome, the vault) is `unknown error`.
    private static func webDriver(_ body: () throws(Problem) -> HTTPResponse) throws(Problem) -> HTTPResponse {
        do { return try body() } catch {
            let code = error.webDriverError.flatMap(WebDriverErrorCode.init(rawValue:))
                ?? ([400, 404].contains(error.status) ? .invalidArgument : .unknownError)
            var problem = error
            problem.webDriverError = code.rawValue
            problem.status = code.status
            throw problem
        }
    }

    /// The authenticator extensions (§11, "Authenticator Extension Capabilities") a virtual authenticator's `extensions` may name.
    static let authenticatorExtensions: Set<String> = ["credBlob", "credProtect", "hmac-secret", "largeBlob", "minPinLength", "prf"]
}

/// The WebDriver error codes §11's commands answer with, and the HTTP status WebDriver's table of
/// errors gives each (W3C WebDriver, "Errors").
enum WebDriverErrorCode: String {
    case invalidArgument = "invalid argument"
    case unsupportedOperation = "unsupported operation"
    case unknownError = "unknown error"

    var status: Int { self == .invalidArgument ? 400 : 500 }
}

extension Problem {
    /// What a WebDriver endpoint cannot do though the request is valid: `unsupported operation`.
    static func unsupported(_ detail: String) -> Problem {
        var problem = Problem(500, .notSupported, detail)
        problem.webDriverError = WebDriverErrorCode.unsupportedOperation.rawValue
        return problem
    }
}

/// New Session's answer: the id and the capabilities of §11.2.
struct NewSession: Encodable {
    let sessionId: String
    let capabilities: [String: Bool] = ["webauthn:virtualAuthenticators": true, "webauthn:extension:largeBlob": true,
                                        "webauthn:extension:credBlob": true, "webauthn:extension:prf": true]
}

/// A credential as WebDriver's Get Credentials gives it (§11.3 Credential Parameters), private
/// key included; without the key, as the events and Chrome DevTools' WebAuthn domain show it.
struct WebDriverCredential: Encodable {
    let credentialId: String
    let isResidentCredential: Bool
    let rpId: String
    let privateKey: String?
    let userHandle: String
    let signCount: UInt32?
    let backupEligibility: Bool
    let backupState: Bool
    let userName: String
    let userDisplayName: String

    /// As Get Credentials gives it: the private key, and `signCount` `null` for a credential with no
    /// signature counter (WebAuthn L3 §11, "number or null", w3c/webauthn#2382).
    init(gotten c: Credential, privateKey: [UInt8]) {
        self.init(c, privateKey: privateKey, signCount: c.countsSignatures ? c.signCount : nil)
    }

    /// As an event shows it: no private key, and the count the credential's assertions report
    /// (0 for one with no counter), as Chrome DevTools' `signCount` is a number.
    init(_ c: Credential) {
        self.init(c, privateKey: nil, signCount: c.signCount)
    }

    private init(_ c: Credential, privateKey: [UInt8]?, signCount: UInt32?) {
        credentialId = Base64URL.encode(c.id)
        isResidentCredential = true
        rpId = c.rpId
        self.privateKey = privateKey.map(Base64URL.encode)
        userHandle = Base64URL.encode(c.userHandle)
        self.signCount = signCount
        backupEligibility = c.backupEligible
        backupState = c.backupState
        userName = c.userName
        userDisplayName = c.userDisplayName
    }

    private enum CodingKeys: String, CodingKey {
        case credentialId, isResidentCredential, rpId, privateKey, userHandle, signCount, backupEligibility, backupState, userName, userDisplayName
    }

    /// As synthesized, except `signCount`, written as `null` rather than left out.
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(credentialId, forKey: .credentialId)
        try c.encode(isResidentCredential, forKey: .isResidentCredential)
        try c.encode(rpId, forKey: .rpId)
        try c.encodeIfPresent(privateKey, forKey: .privateKey)
        try c.encode(userHandle, forKey: .userHandle)
        try c.encode(signCount, forKey: .signCount)
        try c.encode(backupEligibility, forKey: .backupEligibility)
        try c.encode(backupState, forKey: .backupState)
        try c.encode(userName, forKey: .userName)
        try c.encode(userDisplayName, forKey: .userDisplayName)
    }
}
