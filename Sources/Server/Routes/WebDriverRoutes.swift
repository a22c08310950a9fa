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
            let hosted = try s.authenticator(call)
            let added = Self.addedPasskey(body)
            return try hosted.serve { () throws(Problem) in
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
                    let shapes = try held.map { c throws(Problem) in
                        // The key itself, as §11.8 gives it; the authenticator's user verifies for a
                        // passkey sealed under the biometric.
                        let key = try session { () throws(SessionError) in try hosted.session.privateKey(device: hosted.id, credentialId: c.id) }
                        return WebDriverCredential(c, privateKey: key)
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
            let eligible = body.backupEligibility, state = body.backupState
            return try hosted.serve { () throws(Problem) in
                let held = try Self.held(id, on: hosted.id, in: hosted)
                let changed = try session { () throws(SessionError) in
                    try hosted.session.setBackupFlags(device: hosted.id, credentialId: id, eligible: eligible, state: state ?? held.backupState)
                }
                hosted.events.emit(.credentialUpdated, CredentialEventData(device: hosted.id, changed, time: hosted.now))
                return .json(200, #"{"value":null}"#)
            }
        }
    }

    /// Add Virtual Authenticator (§11.4): `protocol` (`ctap2` or `ctap2_1`; `ctap1/u2f` is not a
    /// passkey provider), `transport`, `hasResidentKey`, `hasUserVerification`, `isUserConsenting`
    /// (default true), `isUserVerified` (default false), `extensions`, `defaultBackupEligibility`,
    /// `defaultBackupState`. The device is a platform authenticator whatever the transport says.
    private func addVirtualAuthenticator(_ call: Router<AccountService>.Call, _ body: Body.VirtualAuthenticator) throws(Problem) -> HTTPResponse {
        guard body.protocol.value != .ctap1 else {
            throw Problem.input("protocol must be ctap2 or ctap2_1 (authctl is a CTAP 2 platform authenticator; ctap1/u2f makes no passkeys)")
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
            // The backup flags of the passkeys it makes: device-bound (BE=0), or BS=1 at once.
            hosted.deviceBoundByDefault = eligible == false
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
            throw Problem.notFound("session \(JSONText.shown(call.parameter("session"))) has no virtual authenticator \(JSONText.shown(id))")
        }
        return try hosted(id)
    }

    /// A problem with WebDriver's error as well (`value.error`, `value.message`).
    private static func webDriver(_ body: () throws(Problem) -> HTTPResponse) throws(Problem) -> HTTPResponse {
        do { return try body() } catch {
            var problem = error
            problem.webDriverError = error.status >= 500 ? "unknown error" : error.status == 422 ? "unable to set" : "invalid argument"
            throw problem
        }
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
    let signCount: UInt32
    let backupEligibility: Bool
    let backupState: Bool
    let userName: String
    let userDisplayName: String

    init(_ c: Credential, privateKey: [UInt8]? = nil) {
        credentialId = Base64URL.encode(c.id)
        isResidentCredential = true
        rpId = c.rpId
        self.privateKey = privateKey.map(Base64URL.encode)
        userHandle = Base64URL.encode(c.userHandle)
        signCount = c.signCount
        backupEligibility = c.backupEligible
        backupState = c.backupState
        userName = c.userName
        userDisplayName = c.userDisplayName
    }
}
